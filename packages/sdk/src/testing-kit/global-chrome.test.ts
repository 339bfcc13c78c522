// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { Pedelec } from "../pedelec.js";
import { createPedelecTestKit, type PedelecTestKit } from "./index.js";

const kits: PedelecTestKit[] = [];
afterEach(async () => {
  await Promise.all(kits.splice(0).map((kit) => kit.dispose()));
  delete (globalThis as { chrome?: unknown }).chrome;
});

describe("the kit in a DOM test environment", () => {
  it("reaches code that builds its own client once the global chrome.runtime is installed, and puts it back", async () => {
    const kit = createPedelecTestKit({ origin: "https://board.test" });
    kits.push(kit);
    (globalThis as { chrome?: unknown }).chrome = { i18n: { getUILanguage: () => "en" } };
    const uninstall = kit.installGlobalChrome();
    const chrome = (globalThis as { chrome?: { runtime?: unknown; i18n?: unknown } }).chrome;
    expect(chrome?.runtime).toBe(kit.runtime);
    expect(chrome?.i18n).toBeDefined();

    // What an app does in its own module: a client of its own, rendering the agent's words into the page.
    const pedelec = new Pedelec();
    expect(await pedelec.getApprovalStatus()).toMatchObject({ installed: true, approved: true, origin: "https://board.test" });
    const output = document.createElement("p");
    document.body.append(output);
    const session = await pedelec.createSession();
    session.onChatDelta((delta) => output.append(delta));
    const sending = session.sendText("Hello?");
    const turn = await kit.agent.nextTurn();
    turn.delta("Hi ");
    await expect.poll(() => output.textContent, { timeout: 1_000 }).toBe("Hi ");
    turn.delta("there");
    turn.complete();
    await sending;
    expect(output.textContent).toBe("Hi there");

    uninstall();
    expect((globalThis as { chrome?: { runtime?: unknown } }).chrome).toEqual({ i18n: expect.any(Object) });
    expect((await new Pedelec().getApprovalStatus()).installed).toBe(false);
  });

  it("removes the global it added when disposed", async () => {
    const kit = createPedelecTestKit();
    kit.installGlobalChrome();
    expect((globalThis as { chrome?: unknown }).chrome).toBeDefined();
    await kit.dispose();
    expect("chrome" in globalThis).toBe(false);
  });
});
