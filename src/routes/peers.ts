import { Hono } from "hono";
import { CODES } from "../api/errors.js";
import { type ExternalPeer } from "../api/operator.js";
import type { AppEnv } from "../http/app-env.js";
import { ENGINE_HOST_SILENT, engineList } from "../platform/engine-list.js";
import { hostOf } from "../platform/stubs.js";
import { refused } from "../http/answer.js";
import { serve } from "../http/serve.js";

/** SPEC "Operating the host": peers (docs/operating.md, "Peers"). */
export const peers = new Hono<AppEnv>();

serve(peers, "GET /peers", async (c) => {
  const external = JSON.parse(await hostOf(c.env).records("peer")) as ExternalPeer[];
  const engines = await engineList(c.env);
  return c.json({
    peers: [
      { name: "local", kind: "local", engines: engines ?? null, ...(engines ? {} : { error: ENGINE_HOST_SILENT }) },
      ...external.map((p) => ({ ...p, kind: "external" })),
    ],
  });
});

serve(peers, "POST /peers/external", async (c) => {
  const body = c.req.valid("json");
  if (body.name === "local") refused(409, "the name local is this host's own peer", CODES.peerExists);
  const peer: ExternalPeer = { name: body.name, url: body.url ?? null, description: body.description ?? null, registeredAt: new Date().toISOString() };
  if (!(await hostOf(c.env).addRecord("peer", peer.name, JSON.stringify(peer))))
    refused(409, `an external peer named ${peer.name} is registered already; remove it first to change it`, CODES.peerExists);
  return c.json(peer, 201);
});

serve(peers, "DELETE /peers/external/:name", async (c) => {
  const name = c.req.param("name");
  if (!(await hostOf(c.env).removeRecord("peer", name))) refused(404, `no external peer ${name}`, CODES.peerNotFound);
  return c.json({ removed: name });
});
