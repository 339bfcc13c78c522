import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderCode } from "@pedelec/protocol/domain";
import { createSessionInputSchema, type CreateSessionInput } from "@pedelec/protocol/requests";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { privateCliEnvironment } from "../../../test/real-clis/cli-environment.js";
import { realCliPath } from "../../../test/real-clis/real-clis.js";
import type { ProviderLocator } from "./provider-locator.js";
import { createProviderRegistry } from "./providers/provider-registry.js";
import { chooseSessionSetup } from "./session-choice.js";
import { settingsFileSchema } from "./settings.js";

const providers = createProviderRegistry();
/** Finds every provider at `executables[provider]` (or /bin/true), as discovery would have. */
const locatorFor = (executables: Partial<Record<ProviderCode, string>> = {}) =>
  ({
    locate: async (provider: ProviderCode) => ({ adapter: providers.get(provider)!, executablePath: executables[provider] ?? "/bin/true" }),
  }) as unknown as ProviderLocator;

const choose = (input: CreateSessionInput, executables: Partial<Record<ProviderCode, string>> = {}, env: NodeJS.ProcessEnv = {}) =>
  chooseSessionSetup(createSessionInputSchema.parse(input), settingsFileSchema.parse({ defaultEffortLevel: "low" }), {
    origin: "https://app.example",
    fullAccessAdmitted: false,
    providers,
    locator: locatorFor(executables),
    env,
  });

describe("chooseSessionSetup: explicit effort", () => {
  it("maps each level to the CLI's own knob, in place of the effort profile", async () => {
    await expect(choose({ provider: "claude", model: "opus", effort: "max" })).resolves.toMatchObject({
      effortLevel: null,
      effort: "max",
      effortArgv: ["--effort", "max"],
      model: "opus",
    });
    await expect(choose({ provider: "codex", model: "gpt-5.5", effort: "xhigh" })).resolves.toMatchObject({
      effortLevel: null,
      effort: "xhigh",
      effortArgv: ["-c", "model_reasoning_effort=xhigh"],
    });
    // Without effort the profile applies as before.
    await expect(choose({ provider: "claude", model: "opus" })).resolves.toMatchObject({
      effortLevel: "low",
      effort: null,
      effortArgv: ["--effort", "low"],
    });
  });

  it("refuses a level the CLI lacks with EFFORT_NOT_SUPPORTED naming the ones it has", async () => {
    await expect(choose({ provider: "codex", model: "gpt-5.5", effort: "max" })).rejects.toMatchObject({
      code: "EFFORT_NOT_SUPPORTED",
      message: "Codex has no effort max: it has low, medium, high, xhigh",
      details: { provider: "codex", effort: "max", supported: ["low", "medium", "high", "xhigh"] },
    });
    for (const provider of ["cursor", "antigravity"] as const) {
      await expect(choose({ provider, model: "some-model", effort: "high" })).rejects.toMatchObject({
        code: "EFFORT_NOT_SUPPORTED",
        message: expect.stringContaining("has no effort setting"),
        details: { provider, effort: "high", supported: [] },
      });
    }
  });

  it("gives Pedelec's own agent Ollama's think levels, and checks them like a profile", () => {
    const ollama = providers.get("ollama")!;
    expect(ollama.explicitEffort?.levels).toEqual(["low", "medium", "high"]);
    expect(ollama.validateEffortArgv(ollama.explicitEffort!.argv("high"), "explicit")).toEqual(["--think", "high"]);
  });
});

describe("chooseSessionSetup: OpenCode's variants of the model (real opencode)", () => {
  let folder: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "pedelec-opencode-variants-"));
    // The stand-in model of the private configuration defines the variants low, medium and high.
    env = { PATH: process.env.PATH ?? "", ...(await privateCliEnvironment("opencode", { url: "http://127.0.0.1:9/v1" }, folder)).env };
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });
  const opencode = () => ({ opencode: realCliPath("opencode") });

  it("takes a variant the model defines, and refuses one it does not, naming the model's", { timeout: 60_000 }, async () => {
    await expect(choose({ provider: "opencode", model: "standin/standin-model", effort: "high" }, opencode(), env)).resolves.toMatchObject({
      effort: "high",
      effortArgv: ["--variant", "high"],
    });
    await expect(choose({ provider: "opencode", model: "standin/standin-model", effort: "xhigh" }, opencode(), env)).rejects.toMatchObject({
      code: "EFFORT_NOT_SUPPORTED",
      message: "OpenCode's model standin/standin-model has no effort xhigh: it has low, medium, high",
      details: { provider: "opencode", effort: "xhigh", supported: ["low", "medium", "high"], model: "standin/standin-model" },
    });
    await expect(choose({ provider: "opencode", model: "standin/no-such-model", effort: "high" }, opencode(), env)).rejects.toMatchObject({
      code: "EFFORT_NOT_SUPPORTED",
      details: { supported: [], model: "standin/no-such-model" },
    });
  });

  it("fails with PROVIDER_FAILED when OpenCode cannot list its models", async () => {
    await expect(choose({ provider: "opencode", model: "standin/standin-model", effort: "high" }, { opencode: "/bin/false" })).rejects.toMatchObject({
      code: "PROVIDER_FAILED",
    });
  });
});
