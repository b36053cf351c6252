import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const PREFIX = "svcph";

export interface PlaceholderClaim {
  account: string;
  threadId: string;
}

/**
 * The credentials sessions hold instead of real ones: `svcph.<account>.<thread>.<mac>`,
 * signed with a host key so a session cannot name an account it was not given. The
 * proxy needs nothing but the key to read one, so a restarted proxy still knows every
 * session's placeholder.
 */
export class Placeholders {
  private readonly key: Buffer;

  constructor(keyPath: string) {
    if (!existsSync(keyPath)) {
      mkdirSync(dirname(keyPath), { recursive: true });
      writeFileSync(keyPath, randomBytes(32).toString("hex"), { mode: 0o600 });
    }
    this.key = Buffer.from(readFileSync(keyPath, "utf8").trim(), "hex");
  }

  make(claim: PlaceholderClaim): string {
    const body = `${PREFIX}.${encode(claim.account)}.${encode(claim.threadId)}`;
    return `${body}.${this.mac(body)}`;
  }

  /** The claim of a placeholder this host made, or null for anything else (a real key, a forgery). */
  read(value: string): PlaceholderClaim | null {
    const parts = value.split(".");
    if (parts.length !== 4 || parts[0] !== PREFIX) return null;
    const body = parts.slice(0, 3).join(".");
    const given = Buffer.from(parts[3]!);
    const expected = Buffer.from(this.mac(body));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return { account: decode(parts[1]!), threadId: decode(parts[2]!) };
  }

  private mac(body: string): string {
    return createHmac("sha256", this.key).update(body).digest("base64url").slice(0, 32);
  }
}

function encode(s: string): string {
  return Buffer.from(s).toString("base64url");
}

function decode(s: string): string {
  return Buffer.from(s, "base64url").toString();
}
