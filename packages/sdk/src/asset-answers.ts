import { assetUploadReceiptSchema, type AssetUploadReceipt } from "@pedelec/protocol/assets";
import type { ErrorCode } from "@pedelec/protocol/error-codes";
import { PedelecError } from "@pedelec/protocol/pedelec-error";
import { wireErrorSchema } from "@pedelec/protocol/wire-error";

// Messages here never include the transfer URL: its port and ticket are not the app's business.

/**
 * The error an HTTP answer that is not a success stands for: the server's own `{"error":{code,message}}` when it sent
 * one, otherwise `fallbackCode` naming the status.
 */
export function errorFromAnswer(status: number, body: string, fallbackCode: ErrorCode, transfer: "upload" | "download"): PedelecError {
  // A refused transfer is answered with {"error":{code,message}}.
  const answer = parseJsonOrUndefined(body);
  const error = typeof answer === "object" && answer !== null ? (answer as { error?: unknown }).error : undefined;
  const parsed = wireErrorSchema.safeParse(error);
  if (parsed.success) return PedelecError.fromWire(parsed.data);
  return new PedelecError(fallbackCode, `The asset server refused the ${transfer} (HTTP ${status})`, { status });
}

/** The receipt of a finished upload; a body that is not one is the server's fault. */
export function parseUploadReceipt(body: string): AssetUploadReceipt {
  const parsed = assetUploadReceiptSchema.safeParse(parseJsonOrUndefined(body));
  if (parsed.success) return parsed.data;
  throw new PedelecError("SDK_PROTOCOL_ERROR", "The asset server answered the upload with an invalid receipt", {
    issues: parsed.error.issues,
  });
}

export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * Reads a download's body, which must be exactly `sizeBytes` long: it stops reading as soon as it gets longer, so a
 * misbehaving server cannot make the page hold more than it was told.
 */
export async function readExactBody(response: Response, sizeBytes: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(sizeBytes);
  let received = 0;
  const reader = response.body?.getReader();
  if (reader !== undefined) {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (received + value.byteLength > sizeBytes) {
          void reader.cancel().catch(() => undefined);
          throw lengthMismatch(sizeBytes, "more");
        }
        bytes.set(value, received);
        received += value.byteLength;
      }
    } catch (error) {
      if (error instanceof PedelecError) throw error;
      throw downloadBrokeOff();
    }
  }
  if (received !== sizeBytes) throw lengthMismatch(sizeBytes, "fewer");
  return bytes;
}

/** Reads a download's body as a Blob (the browser may keep a large one on disk) and checks its length. */
export async function readBlobBody(response: Response, sizeBytes: number): Promise<Blob> {
  let blob: Blob;
  try {
    blob = await response.blob();
  } catch {
    throw downloadBrokeOff();
  }
  if (blob.size !== sizeBytes) throw lengthMismatch(sizeBytes, blob.size > sizeBytes ? "more" : "fewer");
  return blob;
}

function lengthMismatch(sizeBytes: number, direction: "more" | "fewer"): PedelecError {
  return new PedelecError(
    "ASSET_READ_FAILED",
    `The asset server sent ${direction} bytes than the asset's ${sizeBytes}; the file may have changed during the read`,
  );
}

function downloadBrokeOff(): PedelecError {
  return new PedelecError("ASSET_READ_FAILED", "The download broke off before the whole asset arrived");
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
