import type { ApprovalDecision, QuestionReply } from "../../src/api/engine.js";

/** A turn an engine is running, as the engine host drives it. */
export interface EngineTurn {
  /** Settles after the turn's `end` report was emitted. */
  done: Promise<void>;
  /** False when the engine waits on no such approval. */
  decide(approvalId: string, decision: ApprovalDecision): boolean;
  /** False when the engine waits on no such question. */
  reply(requestId: string, answer: QuestionReply): boolean;
  interrupt(): void;
}
