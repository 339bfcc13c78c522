// Server rendering runs in Node without a DOM: no window, no chrome.runtime.
import { renderToString } from "react-dom/server";
import { afterEach, describe, expect, it } from "vitest";
import { createPedelecTestKit, type PedelecTestKit } from "../testing-kit/index.js";

let kit: PedelecTestKit | undefined;

afterEach(async () => {
  await kit?.dispose();
  kit = undefined;
});

/** Resolves after every timer already due has fired, so a session the render had started would have been asked for. */
function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

describe("server rendering", () => {
  it("imports without a DOM, renders the inactive state, and creates no session", async () => {
    expect(typeof window).toBe("undefined");
    const { PedelecProvider, usePedelec, usePedelecSession } = await import("./index.js");
    kit = createPedelecTestKit();
    const client = kit.pedelec;
    function Chat() {
      const pedelec = usePedelec();
      const { status, session, messages, error } = usePedelecSession({ provider: "claude" });
      return (
        <p>
          {`client:${pedelec === null ? "none" : "some"} status:${status} session:${session === null ? "none" : "some"} ` +
            `messages:${messages.length} error:${error === null ? "none" : error.code}`}
        </p>
      );
    }
    const withClient = renderToString(
      <PedelecProvider client={client}>
        <Chat />
      </PedelecProvider>,
    );
    const withoutClient = renderToString(
      <PedelecProvider>
        <Chat />
      </PedelecProvider>,
    );
    const expected = "client:none status:inactive session:none messages:0 error:none";
    expect(withClient).toContain(expected);
    expect(withoutClient).toContain(expected);
    await nextTask();
    expect(kit.requestsOf("createSession")).toEqual([]);
  });
});
