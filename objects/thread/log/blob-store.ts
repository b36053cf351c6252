import type { BlobRef } from "../../../src/api/events.js";
import { CODES } from "../../../src/api/errors.js";
import { refuse, type Refusal } from "../../../src/api/outcome.js";
import { storageFault, storageFullRefusal } from "../../../src/rules/storage-fault.js";

const encoder = new TextEncoder();

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/** A large body that could not be saved; `key` names where it should have gone. */
export class BlobSaveError extends Error {
  constructor(
    readonly key: string,
    cause: unknown,
  ) {
    super(`could not save ${key}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/**
 * Why a save was refused: a full volume is `507 storage-full` like any write, any other
 * failure the store's own `503 blob-store-unavailable`. Nothing was appended either way.
 */
export function blobSaveRefusal(err: unknown, what: string): Refusal {
  const full = storageFault(err, true);
  if (full) return storageFullRefusal(full);
  return refuse(503, `the blob store could not save ${what}: ${(err as Error).message}`, CODES.blobStoreUnavailable);
}

/** Large event bodies, addressed by their SHA-256 so a repeated body is stored once. */
export class BlobStore {
  /** `failPuts` is the `blob-put` fault: every save fails as a broken store would. */
  constructor(
    private readonly bucket: R2Bucket,
    private readonly failPuts = false,
  ) {}

  static key(sha256: string): string {
    return `sha256/${sha256}`;
  }

  async put(text: string): Promise<BlobRef> {
    return this.putBytes(encoder.encode(text));
  }

  /** Any bytes (a message's attachment); one copy per content, whoever stored it first. */
  async putBytes(bytes: Uint8Array): Promise<BlobRef> {
    const sha256 = await sha256Hex(bytes);
    const key = BlobStore.key(sha256);
    try {
      if (this.failPuts) throw new Error("injected fault blob-put (SERVICE_FAULTS)");
      await this.bucket.put(key, bytes, { sha256 });
    } catch (err) {
      throw new BlobSaveError(key, err);
    }
    return { sha256, bytes: bytes.byteLength };
  }

  async get(sha256: string): Promise<string> {
    const object = await this.bucket.get(BlobStore.key(sha256));
    if (!object) throw new Error(`blob ${sha256} is missing from the blob store`);
    return object.text();
  }

  async getBytes(sha256: string): Promise<Uint8Array> {
    const object = await this.bucket.get(BlobStore.key(sha256));
    if (!object) throw new Error(`blob ${sha256} is missing from the blob store`);
    return new Uint8Array(await object.arrayBuffer());
  }
}

export { sha256Hex };
