import { PedelecError } from "@pedelec/protocol/pedelec-error";

/**
 * Folders no page may point its agent at, whatever the user would answer: the root and the system folders directly
 * under it. Core refuses these too (and the user's home and PEDELEC_HOME, which only it knows).
 */
const SYSTEM_FOLDERS: ReadonlySet<string> = new Set(["/", "/etc", "/usr", "/bin", "/sbin", "/lib", "/var", "/proc", "/sys", "/dev", "/boot"]);

/** Kernel and device file systems: nothing below them is a project folder. */
const PSEUDO_FILE_SYSTEMS = ["/proc/", "/sys/", "/dev/"] as const;

// Control characters, and the Unicode marks that reorder text on screen: the user must read the folder exactly as
// it is before allowing it, so a name that renders differently from what it is gets refused.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the pattern exists to find control characters
const UNREADABLE_CHARACTERS = /[\u0000-\u001f\u007f\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/**
 * The folder a page asked for, in the one spelling consents are stored and compared under: an absolute POSIX path
 * with duplicate and trailing slashes removed. Purely lexical (the extension cannot see the disk); a path with a
 * `.` or `..` segment is refused rather than resolved, so the folder the user reads is the folder Core gets.
 * Throws WORKSPACE_PATH_INVALID.
 */
export function normalizeWorkspacePath(requested: string): string {
  if (UNREADABLE_CHARACTERS.test(requested)) {
    throw invalid(requested, "it contains control or text-direction characters");
  }
  if (!requested.startsWith("/")) throw invalid(requested, "it is not an absolute path");
  const segments = requested.split("/").filter((segment) => segment !== "");
  if (segments.some((segment) => segment === "." || segment === "..")) {
    throw invalid(requested, 'it contains a "." or ".." segment');
  }
  const normalized = `/${segments.join("/")}`;
  if (SYSTEM_FOLDERS.has(normalized) || PSEUDO_FILE_SYSTEMS.some((prefix) => normalized.startsWith(prefix))) {
    throw invalid(requested, "it is a system folder");
  }
  return normalized;
}

function invalid(requested: string, reason: string): PedelecError {
  return new PedelecError("WORKSPACE_PATH_INVALID", `workspace.path ${JSON.stringify(requested)} is refused: ${reason}`, {
    path: requested,
  });
}
