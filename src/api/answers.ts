/**
 * What the runtime's answers look like on the wire, for the clients that read them: the
 * client library checks an answer against these before handing it on, so an answer of
 * the wrong shape is a `decode` failure (SPEC "Errors") rather than a wrong value later.
 * Each is the route's own exact schema, declared in its family's file (and on its row of
 * contract.ts); a field a newer host adds is dropped, not refused.
 */

/** The thread and turn routes' exact answers, under the names the client library checks them by. */
export { PostedMessage as MessageAcceptedAnswer, SpawnResult as SpawnResultAnswer, ThreadListPage as ThreadListPageAnswer, ThreadRow as ThreadRowAnswer } from "./threads.js";
export { ForwardEventPage as ForwardPageAnswer, ReverseEventPage as ReversePageAnswer } from "./tail.js";
export { SendResult as SendResultAnswer, TurnStatus as TurnStatusAnswer } from "./turns.js";

/** `GET /health`, declared exactly beside the other operator answers; the client checks it under this name. */
export { Health as HealthAnswer } from "./operator.js";

/** The room routes' exact answers (src/api/rooms.ts), under the names the client library checks them by. */
export {
  BuildThread as BuildThreadAnswer,
  Capabilities as CapabilitiesAnswer,
  CostPerMergedPr as CostPerMergedPrAnswer,
  Receipt as ReceiptAnswer,
  ReviewPosted as ReviewPostedAnswer,
  RoomFound as RoomFoundAnswer,
  RoomOnly as RoomOnlyAnswer,
  RoundOnly as RoundOnlyAnswer,
} from "./rooms.js";
