// The dispatch floor's two processes, in trivial code (dispatch-floor.ts): `server` is a
// node:http server whose POST /submit inserts one row with postgres.js and answers the claim
// parked by POST /claim; `runner` is a client (undici's request, as fluksio's) that parks one
// claim per "claim" line read from stdin and speaks parked-runner.ts's protocol on stdout.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import postgres from 'postgres';
import { request } from 'undici';

const role = process.argv[2];
if (role === 'server') {
  const sql = postgres(process.env.DATABASE_URL ?? '', { max: 1, onnotice: () => {} });
  await sql`create table if not exists runs (id bigserial primary key, queued_at timestamptz not null default now(), body jsonb not null)`;
  let parked: ServerResponse | null = null;
  const json = (response: ServerResponse, value: unknown): void => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/claim') {
        parked = res;
      } else if (req.url === '/metrics') {
        res.end(`fluksio_claims_parked ${parked ? 1 : 0}\n`);
      } else if (req.url === '/submit') {
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString());
        void sql<
          { id: string }[]
        >`insert into runs (body) values (${sql.json(body as postgres.JSONValue)}) returning id`.then(
          ([row]) => {
            const claim = parked;
            parked = null;
            if (claim) json(claim, { runId: row?.id });
            json(res, { id: row?.id });
          },
        );
      } else {
        res.writeHead(404).end();
      }
    });
  });
  server.listen(0, '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void sql.end();
  });
} else if (role === 'runner') {
  const url = process.env.FLUKSIO_URL ?? '';
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() !== 'claim') continue;
    const answer = await request(`${url}/claim`, { method: 'POST', body: '{"waitSeconds":30}' });
    const { runId } = (await answer.body.json()) as { runId: string };
    const at = performance.timeOrigin + performance.now();
    process.stdout.write(`${JSON.stringify({ at, runId })}\nfinished\n`);
  }
} else {
  throw new Error(`dispatch-floor-peer.ts: role "${role}" is neither server nor runner`);
}
