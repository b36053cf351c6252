import type { BlobRef } from "../../src/api/events.js";

const encoder = new TextEncoder();

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/** Large event bodies, addressed by their SHA-256 so a repeated body is stored once. */
export class BlobStore {
  constructor(private readonly bucket: R2Bucket) {}

  private static key(sha256: string): string {
    return `sha256/${sha256}`;
  }

  async put(text: string): Promise<BlobRef> {
    const bytes = encoder.encode(text);
    const sha256 = await sha256Hex(bytes);
    await this.bucket.put(BlobStore.key(sha256), bytes, { sha256 });
    return { sha256, bytes: bytes.byteLength };
  }

  async get(sha256: string): Promise<string> {
    const object = await this.bucket.get(BlobStore.key(sha256));
    if (!object) throw new Error(`blob ${sha256} is missing from the blob store`);
    return object.text();
  }
}

export { sha256Hex };
