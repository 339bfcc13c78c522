import type { ProviderCode } from "@pedelec/protocol/domain";
import { log } from "../logger.js";

const noted = new Set<string>();

/**
 * Parsers ignore stream line types they do not read (a CLI adds new ones all the time); the first time Core sees one
 * from a provider it says so in its log, once, so a type worth reading is noticed without flooding the log.
 */
export function noteUnknownLineType(provider: ProviderCode, lineType: string): void {
  const key = `${provider}\0${lineType}`;
  if (noted.has(key) || noted.size >= 1_000) return;
  noted.add(key);
  log("info", "ignored a provider stream line of a type Pedelec does not read", { provider, lineType: lineType.slice(0, 80) });
}
