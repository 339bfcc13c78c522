import { readFile, rm } from "node:fs/promises";
import { afterEach, beforeEach } from "vitest";
import type { ProviderAdapter, ProviderTurnRequest, SessionToolServer } from "../providers/provider-adapter.js";
import { createStandInRoot, type StandInRoot, type StandInRootOptions } from "./provider-stand-in-root.js";
import { runTurn, standInTurnRequest, type TurnOverrides } from "./provider-turns.js";

export interface StandInAdapterOptions extends StandInRootOptions {
  /** The stand-in CLI. */
  executablePath: string;
  /** The effort flags every turn passes, unless a test overrides them. */
  effortArgv: string[];
  /** A fresh adapter for each turn. */
  createAdapter(): ProviderAdapter;
  /** The session MCP server turns name (default TEST_TOOL_SERVER, which is not there). */
  toolServer?: SessionToolServer;
}

/** An adapter under test and its stand-in CLI, in a root that is new for each test. */
export interface StandInAdapter {
  readonly root: string;
  readonly workspace: string;
  readonly env: Record<string, string>;
  /** A turn request for the stand-in in this test's workspace. */
  request(overrides: TurnOverrides): ProviderTurnRequest;
  /** Runs one turn to its end, keeping every event. */
  turn(overrides: TurnOverrides): ReturnType<typeof runTurn>;
  /** The arguments the fake pedelec-cli was last run with. */
  pedelecCliArgv(): Promise<string[]>;
}

/** Gives each test a fresh root (see createStandInRoot), removed after the test. */
export function useStandInAdapter(options: StandInAdapterOptions): StandInAdapter {
  let current: StandInRoot | undefined;
  beforeEach(async () => {
    current = await createStandInRoot(options);
  });
  afterEach(async () => {
    if (current !== undefined) await rm(current.root, { recursive: true, force: true });
    current = undefined;
  });
  const started = (): StandInRoot => {
    if (current === undefined) throw new Error("the stand-in root exists only while a test runs");
    return current;
  };
  const request = (overrides: TurnOverrides): ProviderTurnRequest => {
    const { workspace, env } = started();
    const base = { executablePath: options.executablePath, workspacePath: workspace, effortArgv: options.effortArgv, env };
    return standInTurnRequest(options.toolServer === undefined ? base : { ...base, toolServer: options.toolServer }, overrides);
  };
  return {
    get root() {
      return started().root;
    },
    get workspace() {
      return started().workspace;
    },
    get env() {
      return started().env;
    },
    request,
    turn: (overrides) => runTurn(options.createAdapter(), request(overrides)),
    pedelecCliArgv: async () => (await readFile(started().env.PEDELEC_TEST_ARGV_FILE ?? "", "utf8")).trimEnd().split("\n"),
  };
}
