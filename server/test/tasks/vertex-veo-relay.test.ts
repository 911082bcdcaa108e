// Veo on a Vertex AI channel (type 41) through new-api's generic video routes against the strict Vertex mock: the
// token is the service account's (its JWT grant verified with the account's public key at the mock token endpoint),
// the submit is `:predictLongRunning` at the key's project and the channel's region with that bearer token, charged
// per second × the 4K ratio to the unit (user AND token, one consume row) as Veo on Gemini; the operation is read with
// `:fetchPredictOperation` (not done: running; a 429: unchanged; a Cloud Storage video: success with its URI; a video
// in bytes: success without the bytes in the row; an error, or every sample filtered: failure refunded once); a
// channel whose region or project the upstream refuses is charged nothing.
import { expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { describeEachDb } from '../helpers/databases.js';
import { makeServiceAccount, MockVertex } from '../helpers/mock-vertex.js';
import { type TestServer } from '../helpers/server.js';
import { addChannel, logsOf, setOptions } from '../relay/fixtures.js';
import { serveVertexVeo, type VertexVeoMock } from './vertex-veo-mock.js';
import { videoWorld } from './video-world.js';

const PROJECT = 'veo-project-42';
const REGION = 'us-central1';
const MODEL = 'veo-3.1-generate-preview';
const OTHER_MODEL = 'veo-3.0-generate-001';
const WRONG_REGION_MODEL = 'veo-3.0-fast-generate-001';
const WRONG_PROJECT_MODEL = 'veo-3.1-fast-generate-preview';
const UNKNOWN_ACCOUNT_MODEL = 'veo-3.0-generate-preview';
const PREFIX = `/v1/projects/${PROJECT}/locations/${REGION}/publishers/google/models`;

await describeEachDb('vertex veo relay', (kind) => {
  let vertex: MockVertex;
  let veo: VertexVeoMock;
  let channel: number;
  let account: { client_email: string; private_key: string };
  let s: TestServer;
  const { caller, call, balances, taskRow } = videoWorld(
    kind,
    'vertex-veo',
    async (server) => {
      s = server;
      veo = serveVertexVeo(vertex, PROJECT, REGION);
      const key = vertex.newServiceAccount({ project: PROJECT });
      account = JSON.parse(key);
      // a key file pasted as Google gives it, over many lines: one document, never split per line
      const pretty = JSON.stringify(account, null, 2);
      channel = await addChannel(s, {
        type: 41,
        key: pretty,
        baseUrl: vertex.url,
        other: JSON.stringify({ default: REGION }),
        models: [MODEL, OTHER_MODEL],
      });
      await addChannel(s, { type: 41, key, baseUrl: vertex.url, other: 'europe-west4', models: [WRONG_REGION_MODEL] });
      const stranger = vertex.newServiceAccount({ project: 'someone-elses-project' });
      await addChannel(s, {
        type: 41,
        key: stranger,
        baseUrl: vertex.url,
        other: REGION,
        models: [WRONG_PROJECT_MODEL],
      });
      // an account the token endpoint does not know: its grant is refused
      const unknown = makeServiceAccount(vertex.tokenUrl, { project: PROJECT });
      await addChannel(s, {
        type: 41,
        key: unknown,
        baseUrl: vertex.url,
        other: REGION,
        models: [UNKNOWN_ACCOUNT_MODEL],
      });
      await setOptions(s, {
        ModelPrice: {
          [MODEL]: 0.1,
          [OTHER_MODEL]: 0.1,
          [WRONG_REGION_MODEL]: 0.1,
          [WRONG_PROJECT_MODEL]: 0.1,
          [UNKNOWN_ACCOUNT_MODEL]: 0.1,
        },
      });
      return async () => {
        await vertex?.close();
      };
    },
    async () => {
      vertex = await MockVertex.start();
      return { VERTEX_TOKEN_URL: vertex.tokenUrl };
    },
  );

  it('4K for 6 s: predictLongRunning with the bearer token at the project and region, 450000 charged; polled to its video', async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', {
      model: MODEL,
      prompt: 'a lighthouse at dusk',
      size: '3840x2160',
      duration: 6,
      metadata: { negativePrompt: 'people', personGeneration: 'dont_allow', storageUri: 'gs://veo-out/runs/' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'video', model: MODEL, status: 'queued', seconds: '6' });
    // the token came from the account's signed grant, and the submit carried it
    expect(vertex.grants.map((g) => g.iss)).toContain(account.client_email);
    const sent = veo.calls.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: `${PREFIX}/${MODEL}:predictLongRunning` });
    expect(sent.headers.authorization).toMatch(/^Bearer ya29\./);
    expect(sent.body).toEqual({
      instances: [{ prompt: 'a lighthouse at dusk' }],
      parameters: {
        aspectRatio: '16:9',
        durationSeconds: 6,
        resolution: '4k',
        negativePrompt: 'people',
        personGeneration: 'dont_allow',
        storageUri: 'gs://veo-out/runs/',
      },
    });
    // 0.1 × 500000 × 6 × 1.5
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 450_000, token: 1_500_000 - 450_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, 450_000, MODEL, channel],
    ]);
    expect(logs[0].otherJson).toMatchObject({ task_id: r.body.id, other_ratios: { seconds: 6, resolution: 1.5 } });
    const row = await taskRow(r.body.id);
    expect(row.platform).toBe('vertex-veo');
    expect(row.upstreamId).toMatch(new RegExp(`^${PREFIX.slice(4)}/${MODEL}/operations/[0-9a-f-]{36}$`));
    expect(Number(row.quota)).toBe(450_000);

    // tasks left running by earlier cases are polled in the same pass, in no set order
    const polledFrom = veo.calls.length;
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    const fetched = veo.calls.slice(polledFrom).find((c) => c.body?.operationName === row.upstreamId)!;
    expect(fetched).toMatchObject({ method: 'POST', path: `${PREFIX}/${MODEL}:fetchPredictOperation` });
    expect(fetched.headers.authorization).toBe(sent.headers.authorization);
    veo.states.set(row.upstreamId, { done: true, gcsUri: 'gs://veo-out/runs/sample_0.mp4', http: 429 });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    veo.states.set(row.upstreamId, { done: true, gcsUri: 'gs://veo-out/runs/sample_0.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const done = await call(key, 'GET', `/v1/video/generations/${r.body.id}`);
    expect(done.body).toMatchObject({
      code: 'success',
      data: {
        status: 'SUCCESS',
        platform: 'vertex-veo',
        result_url: 'gs://veo-out/runs/sample_0.mp4',
        progress: '100%',
      },
    });
    expect(JSON.stringify(done.body)).not.toContain(account.private_key.slice(40, 80));
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 450_000, token: 1_500_000 - 450_000 });
  });

  it('a video answered in bytes is a success whose row keeps its size, not its bytes', async () => {
    const { key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', { model: OTHER_MODEL, prompt: 'bytes', seconds: '4' });
    expect(r.status).toBe(200);
    const { upstreamId } = await taskRow(r.body.id);
    const bytes = Buffer.alloc(200_000, 7);
    veo.states.set(upstreamId, { done: true, bytes });
    await pollTaskUpstreams(s.ctx, nowSec());
    const row = await taskRow(r.body.id);
    expect(row.status).toBe('SUCCESS');
    expect(row.data).not.toContain(bytes.toString('base64').slice(0, 64));
    expect(JSON.parse(row.data).response.videos).toEqual([{ mimeType: 'video/mp4', byteSize: 200_000 }]);
  });

  it('an operation error, or every sample filtered, fails and is refunded once', async () => {
    const { user, token, key } = await caller();
    // 720p by default, 8 s by default: 0.1 × 500000 × 8 = 400000
    const a = await call(key, 'POST', '/v1/video/generations', { model: OTHER_MODEL, prompt: 'one' });
    const b = await call(key, 'POST', '/v1/video/generations', { model: MODEL, prompt: 'two', seconds: '4' });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 600_000, token: 1_500_000 - 600_000 });
    veo.states.set((await taskRow(a.body.id)).upstreamId, { error: 'quota exceeded upstream' });
    veo.states.set((await taskRow(b.body.id)).upstreamId, { done: true, filtered: 'unsafe content' });
    await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(a.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'quota exceeded upstream' });
    expect(await taskRow(b.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'unsafe content' });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota)]).sort()).toEqual([
      [2, 200_000],
      [2, 400_000],
      [6, 200_000],
      [6, 400_000],
    ]);
  });

  it('a region, project or account the upstream refuses charges nothing and leaves no task', async () => {
    const { user, token, key } = await caller();
    const from = veo.calls.length;
    const region = await call(key, 'POST', '/v1/video/generations', { model: WRONG_REGION_MODEL, prompt: 'x' });
    const project = await call(key, 'POST', '/v1/video/generations', { model: WRONG_PROJECT_MODEL, prompt: 'x' });
    const account = await call(key, 'POST', '/v1/video/generations', { model: UNKNOWN_ACCOUNT_MODEL, prompt: 'x' });
    expect([region.status, project.status, account.status]).toEqual([404, 502, 502]);
    expect(account.body.error?.message ?? account.body.message).toMatch(/token request failed/);
    expect(veo.calls.slice(from).map((c) => [c.project, c.location, c.action])).toEqual([
      [PROJECT, 'europe-west4', 'predictLongRunning'],
      ['someone-elses-project', REGION, 'predictLongRunning'],
    ]);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });
    expect(await logsOf(s, user.id)).toEqual([]);
    const rows = await s.ctx.db.selectFrom('tasks').select('id').where('user_id', '=', user.id).execute();
    expect(rows).toEqual([]);
  });

  it('images, bad lengths and storage URIs are refused before charging', async () => {
    const { user, token, key } = await caller();
    const from = veo.calls.length;
    for (const body of [
      { model: MODEL, prompt: 'x', image: 'https://img.test/a.png' },
      { model: MODEL, prompt: 'x', duration: 12 },
      { model: MODEL, prompt: 'x', metadata: { storageUri: 'https://bucket.test/out' } },
      { model: MODEL },
    ]) {
      const r = await call(key, 'POST', '/v1/video/generations', body);
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 400]);
    }
    expect(veo.calls.length).toBe(from);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });
  });
});
