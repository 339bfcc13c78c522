/**
 * Asset paths that could show as something they are not. The page's SDK and Core each refuse every one (both through
 * assetPathProblem), and their tests share this list so that the two cannot drift apart.
 */
export const DISGUISING_ASSET_PATHS: [label: string, path: string][] = [
  ["a right-to-left override (invoice + U+202E + fdp.exe shows as invoiceexe.pdf)", "/invoice\u202efdp.exe"],
  ["a left-to-right override", "/a\u202db.txt"],
  ["a right-to-left embedding", "/a\u202bb.txt"],
  ["a left-to-right embedding", "/a\u202ab.txt"],
  ["a pop directional formatting", "/a\u202cb.txt"],
  ["a right-to-left isolate", "/a\u2067b.txt"],
  ["a left-to-right isolate", "/a\u2066b.txt"],
  ["a first-strong isolate", "/a\u2068b.txt"],
  ["a pop directional isolate", "/a\u2069b.txt"],
  ["a left-to-right mark", "/a\u200eb.txt"],
  ["a right-to-left mark", "/a\u200fb.txt"],
  ["an Arabic letter mark", "/a\u061cb.txt"],
  ["a zero-width space", "/a\u200bb.txt"],
  ["a zero-width joiner", "/a\u200db.txt"],
  ["a word joiner", "/a\u2060b.txt"],
  ["a soft hyphen", "/re\u00adport.txt"],
  ["a byte-order mark", "/\ufeffreport.txt"],
  ["a tag character", "/report\u{e0041}.txt"],
  ["a bidi override in a folder", "/in\u202ebox/report.txt"],
  ["a name ending in a space", "/report.txt "],
  ["a folder ending in a space", "/inbox /report.txt"],
  ["a name ending in a dot", "/report.txt."],
  ["a folder ending in a dot", "/inbox./report.txt"],
  ["a name of three dots", "/.../x"],
];
