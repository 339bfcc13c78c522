// The user's MCP servers as the real codex CLI (pinned in test/real-clis) lists them, with a private CODEX_HOME.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { realCliPath } from "../../../../../test/real-clis/real-clis.js";
import { codexUserMcpServers } from "./codex-user-servers.js";

let root: string;
let env: Record<string, string>;
let codex: string;
beforeEach(async () => {
  codex = realCliPath("codex");
  root = await mkdtemp(path.join(tmpdir(), "pedelec-codex-servers-"));
  env = { HOME: root, PATH: process.env.PATH ?? "", CODEX_HOME: path.join(root, "codex-home"), TMPDIR: path.join(root, "tmp") };
  await mkdir(env.CODEX_HOME!);
  await mkdir(env.TMPDIR!);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const list = (workspace: string, environment = env) => codexUserMcpServers(codex, workspace, environment, AbortSignal.timeout(20_000));

describe("codexUserMcpServers (real codex)", () => {
  it("lists the servers the user's config.toml and a trusted project's .codex/config.toml turn on, not the off ones or pedelec", async () => {
    const project = path.join(root, "project");
    await mkdir(path.join(project, ".codex"), { recursive: true });
    await writeFile(
      path.join(env.CODEX_HOME!, "config.toml"),
      [
        "[mcp_servers.github]",
        'command = "/bin/true"',
        '[mcp_servers."dotted.name"]',
        'command = "/bin/true"',
        "[mcp_servers.parked]",
        'command = "/bin/true"',
        "enabled = false",
        "[mcp_servers.pedelec]",
        'command = "/bin/true"',
        `[projects.${JSON.stringify(project)}]`,
        'trust_level = "trusted"',
        "",
      ].join("\n"),
    );
    await writeFile(path.join(project, ".codex", "config.toml"), '[mcp_servers.from_project]\ncommand = "/bin/true"\n');
    expect((await list(project)).sort()).toEqual(["dotted.name", "from_project", "github"]);
    // Outside the trusted project, only the user's own.
    expect((await list(root)).sort()).toEqual(["dotted.name", "github"]);
  });

  it("is empty for a codex without MCP servers", async () => {
    expect(await list(root)).toEqual([]);
  });

  it("is PROVIDER_FAILED when codex cannot list them: a configuration it refuses", async () => {
    await writeFile(path.join(env.CODEX_HOME!, "config.toml"), "[mcp_servers.broken]\nthis is not toml\n");
    await expect(list(root)).rejects.toMatchObject({ code: "PROVIDER_FAILED", details: { command: "codex mcp list --json" } });
  });
});
