import { z } from "zod";
import { sessionIdSchema } from "./domain.js";

/** Largest asset body, each way (SPEC §2: 100 MiB). */
export const MAX_ASSET_BYTES = 100 * 1024 * 1024;
/** Largest asset `readAsset(path, "text" | "json")` decodes in the page; bigger ones are read as a File. */
export const MAX_ASSET_TEXT_BYTES = 16 * 1024 * 1024;
/** How long a transfer ticket may wait for its request. */
export const ASSET_TICKET_TTL_MS = 60_000;
const MAX_ASSET_PATH_LENGTH = 1024;
const MAX_ASSET_NAME_BYTES = 255;

/**
 * Invisible format characters (Unicode category Cf: zero-width spaces and joiners, soft hyphens, word joiners, tags,
 * the byte-order mark) and every bidi control, named as well in case an engine's Unicode tables are older than ours:
 * U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069. A name holding one can show as another (`invoice`, U+202E, `fdp.exe`
 * reads as `invoiceexe.pdf`), so none is accepted.
 */
const DISGUISING_CHARACTER = /[\p{Cf}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/**
 * Why `path` is not an asset path, or null when it is. Asset paths (SPEC §2) start with `/`, separate with `/`, have no
 * empty, `.` or `..` segment, no `\`, NUL or other control character, no invisible format or bidi control character, no
 * name ending in a space or a dot (Windows drops those, so `a.txt.` and `a.txt` would be one file), no name Pedelec keeps
 * for itself (`.pedelec-*`), no name longer than 255 bytes, and nothing that Unicode compatibility folding would change
 * (full-width slashes, one-dot leaders and other look-alikes of `/` and `.`). The same rule runs in the page and in Core.
 */
export function assetPathProblem(path: string): string | null {
  if (!path.startsWith("/")) return "must start with /";
  if (path.length > MAX_ASSET_PATH_LENGTH) return `must be at most ${MAX_ASSET_PATH_LENGTH} characters`;
  if (path.includes("\\")) return "must use / (no backslash)";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the pattern exists to find control characters
  if (/[\u0000-\u001f\u007f]/.test(path)) return "must not hold control characters";
  if (DISGUISING_CHARACTER.test(path)) return "must not hold invisible format or bidi control characters (such as U+202E or U+200B)";
  if (path.normalize("NFKC") !== path) return "must not hold look-alike or compatibility characters (such as ／ or ․)";
  const segments = path.slice(1).split("/");
  for (const segment of segments) {
    if (segment === "") return "must not have empty segments";
    if (segment === "." || segment === "..") return "must not have . or .. segments";
    if (segment.endsWith(" ") || segment.endsWith(".")) return "must not have names ending in a space or a dot";
    if (segment.toLowerCase().startsWith(".pedelec-")) return "must not use names starting with .pedelec- (Pedelec's own)";
    if (new TextEncoder().encode(segment).length > MAX_ASSET_NAME_BYTES) return `names must be at most ${MAX_ASSET_NAME_BYTES} bytes`;
  }
  return null;
}

/**
 * `path` as an error message may show it: JSON-quoted, with every control, invisible format and bidi control character
 * written as an escape (`\u202e`), so a refused name cannot disguise the message that refuses it.
 */
export function printableAssetPath(path: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the pattern exists to find control characters
  const hidden = /[\u0000-\u001f\u007f\p{Cf}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
  return JSON.stringify(path).replace(hidden, (character) => {
    const point = character.codePointAt(0)!;
    return point > 0xffff ? `\\u{${point.toString(16)}}` : `\\u${point.toString(16).padStart(4, "0")}`;
  });
}

export const assetPathSchema = z.string().superRefine((path, context) => {
  const problem = assetPathProblem(path);
  if (problem !== null) context.addIssue({ code: "custom", message: `asset path ${problem}` });
});

/** One file under the workspace's `.pedelec-runtime/assets/`, as `listAssets()` reports it. */
export const assetEntrySchema = z.object({
  name: z.string(),
  path: z.string(),
  sizeBytes: z.number().int().min(0),
  modifiedAt: z.string(),
});
export type AssetEntry = z.infer<typeof assetEntrySchema>;

/** What Core hands the SDK for one transfer: where to send it. The app never sees it. */
export const assetTransferSchema = z.object({
  /** `http://127.0.0.1:<port>/transfers/<ticket>`: the ticket is the only credential, good for one request. */
  url: z.string().url(),
  expiresAt: z.string(),
});

export const assetRequestSchemas = {
  /** A ticket to PUT exactly `sizeBytes` bytes to `path` (replacing a file there). */
  prepareAssetUpload: {
    payload: z.strictObject({
      sessionId: sessionIdSchema,
      path: assetPathSchema,
      sizeBytes: z.number().int().min(0),
      mimeType: z.string().max(255).optional(),
    }),
    result: assetTransferSchema,
  },
  /** A ticket to GET the file at `path`, and what it is. */
  prepareAssetDownload: {
    payload: z.strictObject({ sessionId: sessionIdSchema, path: assetPathSchema }),
    result: assetTransferSchema.extend({ sizeBytes: z.number().int().min(0), mimeType: z.string(), modifiedAt: z.string() }),
  },
  /** Every regular file under the assets folder, newest first, then by path. */
  listAssets: {
    payload: z.strictObject({ sessionId: sessionIdSchema }),
    result: z.array(assetEntrySchema),
  },
} as const;

/** The asset server's JSON answer to a finished upload. */
export const assetUploadReceiptSchema = z.object({ path: z.string(), sizeBytes: z.number().int().min(0), modifiedAt: z.string() });
export type AssetUploadReceipt = z.infer<typeof assetUploadReceiptSchema>;
