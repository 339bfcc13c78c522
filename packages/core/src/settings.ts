import { readFile } from "node:fs/promises";
import { z } from "zod";
import { effortLevelSchema, providerCodeSchema, type EffortLevel, type ProviderCode } from "@pedelec/protocol/domain";
import { PedelecError } from "@pedelec/protocol/pedelec-error";

const effortProfilesSchema = z.partialRecord(effortLevelSchema, z.array(z.string()));

/** The layout of PEDELEC_HOME/settings.json (Core's own file, edited by the user or the control panel). */
export const settingsFileSchema = z.object({
  defaultProvider: providerCodeSchema.nullable().default(null),
  defaultEffortLevel: effortLevelSchema.default("medium"),
  defaultModels: z.partialRecord(providerCodeSchema, z.string().min(1)).default({}),
  effortProfiles: z.partialRecord(providerCodeSchema, effortProfilesSchema).default({}),
  /** A provider silent this long (outside tool waits) is treated as hung. */
  providerIdleTimeoutMs: z.number().int().min(1000).default(10 * 60_000),
});
export type Settings = z.infer<typeof settingsFileSchema>;

export async function loadSettings(settingsFile: string): Promise<Settings> {
  let text: string;
  try {
    text = await readFile(settingsFile, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return settingsFileSchema.parse({});
    throw new PedelecError("INVALID_INPUT", `cannot read ${settingsFile}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new PedelecError("INVALID_INPUT", `${settingsFile} is not valid JSON`);
  }
  const parsed = settingsFileSchema.safeParse(raw);
  if (!parsed.success) throw new PedelecError("INVALID_INPUT", `${settingsFile} is invalid`, parsed.error.issues);
  return parsed.data;
}

export function configuredEffortArgv(settings: Settings, provider: ProviderCode, level: EffortLevel): string[] | undefined {
  return settings.effortProfiles[provider]?.[level];
}
