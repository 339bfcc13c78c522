// What the published package is made of: its entries, where each is built from, and where the build puts them.
// package.json's "exports" and "files" name these paths; the tarball test holds the two together.

/** Built, self-contained files of the published package, beside (never mixed with) tsc's per-file output in dist/. */
export const bundleDirectory = "dist/bundle";

/** The one-file browser build of the main entry (also what the end-to-end tests load into pages). */
export const browserBundleFile = "dist/pedelec.browser.js";

/** Imports left to the application: React is an optional peer dependency of the react entry. */
export const externalModules = ["react", "react-dom"];

/**
 * One built module per entry. `name` is the output file's name in bundleDirectory (`<name>.js`, `<name>.d.ts`),
 * `source` the TypeScript it is built from, `description` the first lines of its reference page.
 */
export const packageEntries = [
  {
    subpath: ".",
    name: "index",
    source: "src/index.ts",
    description:
      "The browser SDK: `Pedelec` connects a page to the Pedelec extension, `PedelecSession` is one conversation " +
      "with the user's local agent, `defineTool` declares the frontend tools the agent may call. The same API is " +
      "also published as one self-contained file at `@kaoruisaac/pedelec/browser`, for pages without a bundler.",
  },
  {
    subpath: "./react",
    name: "react",
    source: "src/react/index.ts",
    description:
      "React bindings: a provider for one `Pedelec` client, a hook that owns a session and its messages, and a hook " +
      "that registers a tool handler for as long as a component is mounted. React is an optional peer dependency.",
  },
  {
    subpath: "./testing",
    name: "testing",
    source: "src/testing-kit/index.ts",
    description:
      "A test kit: a real `Pedelec` client wired to an in-page stand-in of the extension and the desktop runtime, with " +
      "a scripted agent, for an application's own tests (any test runner).",
  },
];

/** The package name every entry is published under. */
export const packageName = "@kaoruisaac/pedelec";

/** `@kaoruisaac/pedelec` for ".", `@kaoruisaac/pedelec/react` for "./react". */
export function entrySpecifier(entry) {
  return entry.subpath === "." ? packageName : `${packageName}/${entry.subpath.slice(2)}`;
}
