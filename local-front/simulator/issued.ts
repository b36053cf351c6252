import { createHmac, randomBytes } from "node:crypto";

/** Responses items remembered at most; older ones are forgotten first (a client rarely sends back an item that old). */
const CAPACITY = 10_000;

/**
 * What the simulator handed out that a client must send back intact, as the providers
 * check it: a Responses item that followed a reasoning item needs that item before it
 * when it comes back, and an Anthropic thinking block must carry the signature it was
 * issued with. Signatures and encrypted reasoning are bound to the model that produced
 * them, as the providers bind theirs: sent to another model, they are refused.
 */
export class Issued {
  private readonly reasoningOf = new Map<string, string>();
  private readonly key = randomBytes(32);

  /** `itemId` (fc_…, msg_…) was output after reasoning item `reasoningId`. */
  followed(itemId: string, reasoningId: string): void {
    this.reasoningOf.set(itemId, reasoningId);
    if (this.reasoningOf.size > CAPACITY) this.reasoningOf.delete(this.reasoningOf.keys().next().value!);
  }

  /** The reasoning item `itemId` was output after, if it was. */
  reasoningBefore(itemId: string): string | undefined {
    return this.reasoningOf.get(itemId);
  }

  sign(thinking: string, model: string): string {
    return createHmac("sha256", this.key).update(`${model}\n${thinking}`).digest("base64");
  }

  verifySigned(text: string, signature: unknown, model: string): boolean {
    return typeof signature === "string" && signature === this.sign(text, model);
  }
}
