import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { THREAD_CAPABILITY_ENV } from "@pedelec/protocol/requests";

/**
 * For tests that speak to Core as a session's agent would: waits until the stand-in agent of a turn running `hang`
 * has marked its workspace, then reads the thread capability from that process's environment, as any process of
 * the agent (a pedelec-cli it runs) would inherit it.
 */
export async function capabilityOfHangingAgent(workspacePath: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pid = await readFile(join(workspacePath, ".stand-in-hanging"), "utf8").catch(() => "");
    if (pid !== "") {
      const environ = await readFile(`/proc/${pid}/environ`, "utf8");
      const entry = environ.split("\0").find((line) => line.startsWith(`${THREAD_CAPABILITY_ENV}=`));
      if (entry === undefined) throw new Error(`the agent (pid ${pid}) has no ${THREAD_CAPABILITY_ENV}`);
      return entry.slice(THREAD_CAPABILITY_ENV.length + 1);
    }
    if (Date.now() > deadline) throw new Error(`no hanging agent in ${workspacePath} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
