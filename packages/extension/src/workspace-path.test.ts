import { describe, expect, it } from "vitest";
import { normalizeWorkspacePath } from "./workspace-path.js";

describe("normalizeWorkspacePath", () => {
  it("collapses duplicate and trailing slashes", () => {
    expect(normalizeWorkspacePath("/home/me/project")).toBe("/home/me/project");
    expect(normalizeWorkspacePath("//home///me/project/")).toBe("/home/me/project");
    expect(normalizeWorkspacePath("/tmp/a b/ünï/")).toBe("/tmp/a b/ünï");
    expect(normalizeWorkspacePath("/home/me/.config/app")).toBe("/home/me/.config/app");
    expect(normalizeWorkspacePath("/home/me/...")).toBe("/home/me/...");
  });

  it.each([
    ["relative", "home/me/project"],
    ["empty", ""],
    ["home shorthand", "~/project"],
    ["a Windows path", "C:\\Users\\me"],
    ["a .. segment", "/home/me/../../etc"],
    ["a trailing ..", "/home/me/project/.."],
    ["a . segment", "/home/./me"],
    ["a NUL byte", "/home/me\u0000/etc"],
    ["a newline", "/home/me\n/etc"],
    ["a text-direction override", "/home/me/\u202Etxt.exe"],
  ])("refuses %s with WORKSPACE_PATH_INVALID", (_label, path) => {
    expect(() => normalizeWorkspacePath(path)).toThrow(expect.objectContaining({ code: "WORKSPACE_PATH_INVALID" }));
  });

  it.each([
    "/",
    "//",
    "/etc",
    "/etc/",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/var",
    "/proc",
    "/sys",
    "/dev",
    "/boot",
    "/proc/self/cwd",
    "/dev/shm",
    "/sys/kernel",
  ])("refuses the system folder %s", (path) => {
    expect(() => normalizeWorkspacePath(path)).toThrow(
      expect.objectContaining({ code: "WORKSPACE_PATH_INVALID", message: expect.stringContaining("system folder") }),
    );
  });

  it("accepts folders below the other system folders, which the user is asked about", () => {
    expect(normalizeWorkspacePath("/var/www/site")).toBe("/var/www/site");
    expect(normalizeWorkspacePath("/etcetera")).toBe("/etcetera");
  });
});
