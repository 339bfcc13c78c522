import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { approvedSession, setUpE2e, type E2eEnvironment } from "./harness.js";
import { attempt, logOf } from "./page-scripts.js";

let environment: E2eEnvironment | undefined;

afterEach(async () => {
  await environment?.close();
  environment = undefined;
});

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

describe("assets in real Chromium", () => {
  it("uploads a 100 MiB file from the page with progress and reads it back unchanged", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page, workspace } = await approvedSession(environment);
    const uploaded = await page.evaluate(async () => {
      const size = 100 * 1024 * 1024;
      const bytes = new Uint8Array(size);
      // A pattern that differs from byte to byte and block to block, so a shifted or repeated block shows in the hash.
      for (let offset = 0; offset < size; offset += 65_536) crypto.getRandomValues(bytes.subarray(offset, offset + 65_536));
      const file = new File([bytes], "big.bin", { type: "application/octet-stream" });
      const digest = async (data: ArrayBuffer) =>
        [...new Uint8Array(await crypto.subtle.digest("SHA-256", data))].map((b) => b.toString(16).padStart(2, "0")).join("");
      const progress: number[] = [];
      const w = window as unknown as Record<string, any>;
      const path: string = await w.session.uploadAsset(file, "/data/big.bin", {
        onProgress: (p: { loadedBytes: number }) => progress.push(p.loadedBytes),
      });
      const back: File = await w.session.readAsset(path, "file");
      return {
        path,
        sentHash: await digest(bytes.buffer),
        backHash: await digest(await back.arrayBuffer()),
        backName: back.name,
        backType: back.type,
        backSize: back.size,
        progressCount: progress.length,
        progressLast: progress.at(-1),
        progressMonotonic: progress.every((value, index) => index === 0 || value >= progress[index - 1]!),
      };
    });
    expect(uploaded).toMatchObject({ path: "/data/big.bin", backName: "big.bin", backType: "application/octet-stream", backSize: 100 * 1024 * 1024 });
    expect(uploaded.backHash).toBe(uploaded.sentHash);
    expect(uploaded.progressCount).toBeGreaterThan(1);
    expect(uploaded.progressLast).toBe(100 * 1024 * 1024);
    expect(uploaded.progressMonotonic).toBe(true);
    // The bytes are on disk where the agent finds them.
    const onDisk = join(workspace.path, ".pedelec-runtime", "assets", "data", "big.bin");
    expect((await stat(onDisk)).size).toBe(100 * 1024 * 1024);
    expect(await sha256OfFile(onDisk)).toBe(uploaded.sentHash);
  });

  it("reads text, JSON and files, lists what the agent wrote, and refuses bad paths and reads with their codes", async () => {
    environment = await setUpE2e({ startCore: true });
    const { page, workspace } = await approvedSession(environment);
    expect(
      await attempt(page, `return await window.session.uploadAsset(new File(["héllo wörld"], "greeting.txt", { type: "text/plain" }));`),
    ).toEqual({ ok: true, value: "/greeting.txt" });
    expect(await attempt(page, `return await window.session.readAsset("/greeting.txt", "text");`)).toEqual({ ok: true, value: "héllo wörld" });

    // The agent writes a report with a script; the page sees and reads it.
    await writeFile(
      join(workspace.path, "report.ts"),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the script written here uses a template literal of its own
      'import { assetsDir } from "pedelec:workspace";\nDeno.writeTextFileSync(`${assetsDir}/report.json`, JSON.stringify({ cards: 3, done: true }));\nconsole.log("written");\n',
    );
    await page.evaluate(() => {
      const w = window as any;
      w.artifacts = [];
      w.session.onArtifact((artifact: unknown) => w.artifacts.push(artifact));
    });
    await attempt(page, `return await window.send(${JSON.stringify('call-tool run_script {"entry":"report.ts"}')});`);
    expect((await logOf(page)).filter((entry) => entry.kind === "chat").at(-1)?.text).toMatch(/^Tool run_script returned: .*"stdout":"written\\n"/);
    // The file the turn wrote arrived as an artifact by the time sendText settled; the one uploaded before did not.
    const reportSize = (await stat(join(workspace.path, ".pedelec-runtime", "assets", "report.json"))).size;
    expect(await page.evaluate(() => (window as any).artifacts)).toEqual([
      { path: "/report.json", kind: "text", sizeBytes: reportSize, mediaType: "application/json", modifiedAt: expect.any(String) },
    ]);
    const listed = await attempt<{ name: string; path: string; sizeBytes: number }[]>(page, "return await window.session.listAssets();");
    expect(listed.ok && listed.value.map((entry) => entry.path).sort()).toEqual(["/greeting.txt", "/report.json"]);
    expect(await attempt(page, `return await window.session.readAsset("/report.json", "json");`)).toEqual({
      ok: true,
      value: { cards: 3, done: true },
    });

    await writeFile(join(workspace.path, ".pedelec-runtime", "assets", "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    expect(await attempt(page, `return await window.session.readAsset("/latin1.txt", "text");`)).toMatchObject({
      ok: false,
      code: "ASSET_TEXT_DECODE_FAILED",
    });
    expect(await attempt(page, `return await window.session.readAsset("/greeting.txt", "json");`)).toMatchObject({
      ok: false,
      code: "ASSET_INVALID_JSON",
    });
    expect(await attempt(page, `return await window.session.readAsset("/missing.txt", "text");`)).toMatchObject({
      ok: false,
      code: "ASSET_NOT_FOUND",
    });
    expect(await attempt(page, `return await window.session.readAsset("/../secret", "text");`)).toMatchObject({
      ok: false,
      code: "ASSET_PATH_INVALID",
    });
    expect(await attempt(page, `return await window.session.uploadAsset(new Blob(["x"]), "/a/./b.txt");`)).toMatchObject({
      ok: false,
      code: "ASSET_PATH_INVALID",
    });

    // An ended session transfers nothing more.
    await page.evaluate(() => (window as unknown as { session: { end(): Promise<void> } }).session.end());
    expect(await attempt(page, "return await window.session.listAssets();")).toMatchObject({ ok: false, code: "SESSION_ENDED" });
  });
});
