import { z } from "zod";

/** What a file the agent made is, by its media type: how a page might show it. */
export const ARTIFACT_KINDS = ["image", "audio", "video", "text", "file"] as const;
export const artifactKindSchema = z.enum(ARTIFACT_KINDS);
export type ArtifactKind = z.infer<typeof artifactKindSchema>;

/**
 * A file the agent wrote (or changed) under the workspace's assets folder during a turn, as `onArtifact` reports it:
 * its asset path (readable with `readAsset`), size, media type (from its name, as a download is served) and kind.
 */
export const artifactSchema = z.object({
  path: z.string(),
  kind: artifactKindSchema,
  sizeBytes: z.number().int().min(0),
  mediaType: z.string(),
  /** ISO 8601, the file's modification time when the turn ended. */
  modifiedAt: z.string(),
});
export type Artifact = z.infer<typeof artifactSchema>;

/** The most artifacts one turn reports; Core says how many more there were, and `listAssets()` shows every one. */
export const MAX_ARTIFACTS_PER_TURN = 100;

/** Media types that are text although not `text/*`. */
const TEXT_MEDIA_TYPES = /^application\/(json|xml|javascript|x-yaml|yaml|toml|x-sh|sql|graphql|ld\+json)$|\+(json|xml)$/;

/** The kind of a media type: image, audio and video by their top-level type, text for `text/*` and textual formats. */
export function artifactKindOf(mediaType: string): ArtifactKind {
  const type = mediaType.split(";", 1)[0]!.trim().toLowerCase();
  if (type.startsWith("image/")) return "image";
  if (type.startsWith("audio/")) return "audio";
  if (type.startsWith("video/")) return "video";
  if (type.startsWith("text/") || TEXT_MEDIA_TYPES.test(type)) return "text";
  return "file";
}
