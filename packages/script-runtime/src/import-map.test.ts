import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveImportMap, withWorkspaceModule } from "./import-map.js";

describe("resolveImportMap", () => {
  let root: string;
  let ws: string;
  const mapPath = () => join(ws, "config", "map.json");
  const sandbox = (map: unknown) =>
    resolveImportMap({ text: typeof map === "string" ? map : JSON.stringify(map), mapPath: mapPath(), realWorkspace: ws, access: "sandbox" });
  const full = (map: unknown) => resolveImportMap({ text: JSON.stringify(map), mapPath: mapPath(), realWorkspace: ws, access: "full" });

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "pedelec-import-map-"));
    ws = join(root, "ws");
    await mkdir(join(ws, "config"), { recursive: true });
    await mkdir(join(root, "outside"));
    await symlink(join(root, "outside"), join(ws, "escape"));
  });
  afterAll(async () => rm(root, { recursive: true, force: true }));

  it("resolves relative targets and keys against the map's folder", () => {
    const map = sandbox({
      imports: { lib: "./lib.ts", "utils/": "../vendor/utils/", "./local.ts": "./other.ts", "/abs.ts": "../abs.ts" },
      scopes: { "../vendor/": { lib: "../vendor/lib2.ts" } },
    });
    const base = pathToFileURL(ws).href;
    expect(map).toEqual({
      imports: {
        lib: `${base}/config/lib.ts`,
        "utils/": `${base}/vendor/utils/`,
        [`${base}/config/local.ts`]: `${base}/config/other.ts`,
        "file:///abs.ts": `${base}/abs.ts`,
      },
      scopes: { [`${base}/vendor/`]: { lib: `${base}/vendor/lib2.ts` } },
    });
  });

  it("adds pedelec:workspace", () => {
    expect(withWorkspaceModule({ imports: { a: "file:///a.ts" }, scopes: {} }, "file:///private/run/pedelec-workspace.js")).toEqual({
      imports: { a: "file:///a.ts", "pedelec:workspace": "file:///private/run/pedelec-workspace.js" },
      scopes: {},
    });
  });

  it.each([
    ["not JSON", "{", /not valid JSON/],
    ["an array", [], /must be a JSON object/],
    ["null", null, /must be a JSON object/],
    ["an unknown key", { imports: {}, extra: 1 }, /unknown top-level key "extra"/],
    ["imports not an object", { imports: [] }, /"?imports"? must be an object/],
    ["a number target", { imports: { a: 1 } }, /must be a string/],
    ["a null target", { imports: { a: null } }, /must be a string/],
    ["a bare target", { imports: { a: "lodash" } }, /is not a URL or a relative path/],
    ["the reserved key", { imports: { "pedelec:workspace": "./x.ts" } }, /reserved/],
    ["another pedelec: key in a scope", { scopes: { "./": { "pedelec:assets": "./x.ts" } } }, /reserved/],
    ["a prefix mapped to a file", { imports: { "lib/": "./lib.ts" } }, /does not end in "\/"/],
    ["an outside relative target", { imports: { a: "../../outside/a.ts" } }, /points outside the workspace/],
    ["an outside prefix", { imports: { "a/": "../../" } }, /points outside the workspace/],
    ["an absolute outside target", { imports: { a: "/etc/passwd" } }, /points outside the workspace/],
    ["an outside file URL", { imports: { a: "file:///etc/passwd" } }, /points outside the workspace/],
    ["an encoded .. that leaves", { imports: { a: "./%2e%2e/%2e%2e/%2e%2e/etc/passwd" } }, /points outside the workspace/],
    ["an encoded slash", { imports: { a: "./a%2f..%2f..%2fx.ts" } }, /not a usable file path/],
    ["a target through a symlink", { imports: { a: "../escape/a.ts" } }, /through a symlink/],
    ["an https target", { imports: { a: "https://example.com/a.ts" } }, /not a workspace file/],
    ["an npm target", { imports: { a: "npm:left-pad" } }, /not a workspace file/],
    ["a jsr target", { imports: { a: "jsr:@std/path" } }, /not a workspace file/],
    ["a data target", { imports: { a: "data:text/javascript,1" } }, /not a workspace file/],
    ["a node target", { imports: { a: "node:fs" } }, /not a workspace file/],
    ["scopes not an object", { scopes: 1 }, /"scopes" must be an object/],
    ["a scope that is not an object", { scopes: { "./": "x" } }, /must be an object/],
  ])("refuses %s in the sandbox", (_name, map, message) => {
    expect(() => sandbox(map)).toThrow(expect.objectContaining({ code: "DENO_IMPORT_MAP_INVALID", message: expect.stringMatching(message) }));
  });

  it("lets Full Access map anywhere, but keeps the structure rules and reserved keys", () => {
    expect(full({ imports: { a: "https://example.com/a.ts", b: "npm:left-pad", c: "/etc/x.ts", d: "jsr:@std/path" } }).imports).toEqual({
      a: "https://example.com/a.ts",
      b: "npm:left-pad",
      c: "file:///etc/x.ts",
      d: "jsr:@std/path",
    });
    expect(() => full({ imports: { "pedelec:workspace": "./x.ts" } })).toThrow(expect.objectContaining({ code: "DENO_IMPORT_MAP_INVALID" }));
    expect(() => full({ imports: { a: 1 } })).toThrow(expect.objectContaining({ code: "DENO_IMPORT_MAP_INVALID" }));
    expect(() => full({ imports: {}, other: {} })).toThrow(expect.objectContaining({ code: "DENO_IMPORT_MAP_INVALID" }));
  });

  it("refuses a map larger than 1 MiB", async () => {
    await writeFile(join(ws, "big.json"), "");
    expect(() => sandbox(`{"imports":{"a":"./${"a".repeat(1024 * 1024)}.ts"}}`)).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/larger than/) }),
    );
  });
});
