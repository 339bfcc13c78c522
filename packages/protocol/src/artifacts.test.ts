import { describe, expect, it } from "vitest";
import { artifactKindOf } from "./artifacts.js";

describe("artifactKindOf", () => {
  it("sorts media types into image, audio, video, text and file", () => {
    expect(artifactKindOf("image/svg+xml")).toBe("image");
    expect(artifactKindOf("audio/mpeg")).toBe("audio");
    expect(artifactKindOf("video/mp4")).toBe("video");
    expect(artifactKindOf("text/markdown; charset=utf-8")).toBe("text");
    expect(artifactKindOf("application/json")).toBe("text");
    expect(artifactKindOf("application/vnd.api+json")).toBe("text");
    expect(artifactKindOf("application/pdf")).toBe("file");
    expect(artifactKindOf("application/octet-stream")).toBe("file");
    expect(artifactKindOf("")).toBe("file");
  });
});
