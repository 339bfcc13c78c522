import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { discoverProvider } from "../provider-discovery.js";
import { createDiscoveryRoot } from "../../testing/stand-in-discovery.js";
import { createCursorAdapter } from "./cursor-adapter.js";

const STAND_IN_DIRECTORY = fileURLToPath(new URL("../../../../../test/stand-ins/cursor", import.meta.url));
const STAND_IN = path.join(STAND_IN_DIRECTORY, "cursor-agent");

let root: string;
let env: Record<string, string>;
beforeEach(async () => {
  ({ root, env } = await createDiscoveryRoot("pedelec-cursor-discovery-", STAND_IN_DIRECTORY, { CURSOR_CONFIG_DIR: "cursor-state" }));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const discover = (environment: Record<string, string>) => discoverProvider(createCursorAdapter(), environment, AbortSignal.timeout(10_000));

describe("cursor discovery", () => {
  it("is available when cursor-agent answers its version and `cursor-agent status` says signed in", async () => {
    expect(await discover(env)).toMatchObject({ available: true, executablePath: STAND_IN, error: null });
  });

  it("says which command signs in when cursor-agent is installed but signed out", async () => {
    await promisify(execFile)(STAND_IN, ["logout"], { env });
    const discovery = await discover(env);
    expect(discovery).toMatchObject({ available: false, executablePath: STAND_IN });
    expect(discovery.error).toBe(`cursor-agent is installed at ${STAND_IN} but not signed in: run \`cursor-agent login\``);
    // An API key in the environment signs it in too.
    expect(await discover({ ...env, CURSOR_API_KEY: "key" })).toMatchObject({ available: true });
  });
});
