import { app } from "./app.js";
import type { Env } from "./platform/env.js";

export { Catalog } from "../objects/catalog.js";
export { Host } from "../objects/host.js";
export { Room } from "../objects/room.js";
export { Thread } from "../objects/thread.js";
export { Workspace } from "../objects/workspace.js";
export { ShardPeer } from "./shard-peer.js";

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
} satisfies ExportedHandler<Env>;
