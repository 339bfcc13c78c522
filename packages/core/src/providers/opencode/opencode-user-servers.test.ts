import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { opencodeUserConfigFiles, opencodeUserMcpServers } from "./opencode-user-servers.js";

let home: string;
beforeEach(async () => {
  home = await mkdtemp(path.join(tmpdir(), "pedelec-opencode-servers-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function write(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

describe("opencodeUserMcpServers", () => {
  it("collects the servers of every configuration file of the user's, JSONC with comments and trailing commas included", async () => {
    const custom = path.join(home, "custom.json");
    const configDir = path.join(home, "oc-dir");
    await write(
      path.join(home, "xdg", "opencode", "opencode.jsonc"),
      '{\n  // mine\n  "mcp": { "github": { "type": "remote", "url": "https://x" }, },\n}\n',
    );
    await write(path.join(home, "xdg", "opencode", "config.json"), JSON.stringify({ mcp: { legacy: {} } }));
    await write(custom, JSON.stringify({ mcp: { "dotted.name": { type: "local", command: ["x"] } } }));
    await write(path.join(configDir, "opencode.json"), JSON.stringify({ mcp: { from_dir: {} } }));
    await write(path.join(home, ".opencode", "opencode.json"), JSON.stringify({ mcp: { dotfolder: {}, github: {} } }));
    const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, "xdg"), OPENCODE_CONFIG: custom, OPENCODE_CONFIG_DIR: configDir };
    expect((await opencodeUserMcpServers(env)).sort()).toEqual(["dotfolder", "dotted.name", "from_dir", "github", "legacy"]);
  });

  it("reads ~/.config/opencode without XDG_CONFIG_HOME, and skips files that are missing, not an object or without mcp", async () => {
    await write(path.join(home, ".config", "opencode", "opencode.json"), JSON.stringify({ mcp: { plain: {} } }));
    await write(path.join(home, ".opencode", "opencode.jsonc"), "[1, 2]");
    await write(path.join(home, ".opencode", "opencode.json"), JSON.stringify({ model: "x/y", mcp: ["not", "a", "map"] }));
    expect(await opencodeUserMcpServers({ HOME: home })).toEqual(["plain"]);
    expect(opencodeUserConfigFiles({ HOME: home })).toContain(path.join(home, ".config", "opencode", "opencode.jsonc"));
  });

  it("finds none where the user has no configuration", async () => {
    expect(await opencodeUserMcpServers({ HOME: home })).toEqual([]);
  });
});
