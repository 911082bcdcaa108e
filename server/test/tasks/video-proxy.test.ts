// A video channel behind its proxy (`setting.proxy`): the create (a multipart form), the poll and the content stream
// all go through it, as the relay's own calls do; and a content larger than the limit is refused unread (502) rather
// than streamed. A local HTTP proxy counts what it forwards, so a call that bypasses it shows as no traffic.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowSec } from '../../src/lib/time.js';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { VIDEO_CONTENT_MAX_BYTES } from '../../src/relay/tasks/video-content.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, setOptions } from '../relay/fixtures.js';
import { startVideoMock, type VideoMock } from './video-mock.js';

const KEY = 'sora-proxied-key';

describe('video calls through the channel proxy', () => {
  let s: TestServer;
  let mock: VideoMock;
  let proxy: http.Server;
  const asked: string[] = [];

  beforeAll(async () => {
    s = await startTestServer();
    mock = await startVideoMock([KEY]);
    // a forwarding proxy (absolute-form requests: the upstream is plain http)
    proxy = http.createServer((req, res) => {
      asked.push(`${req.method} ${new URL(req.url!).pathname}`);
      const u = new URL(req.url!);
      const fwd = http.request(
        { host: u.hostname, port: u.port, path: u.pathname + u.search, method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode!, up.headers);
          up.pipe(res);
          up.on('error', () => res.destroy());
        },
      );
      fwd.on('error', () => res.destroy());
      req.pipe(fwd);
    });
    // a tunnel (CONNECT), as undici's proxy agent asks for; what goes through it is counted by request line
    proxy.on('connect', (req, client: net.Socket, head) => {
      const [host, port] = req.url!.split(':');
      const up = net.connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) up.write(head);
        up.pipe(client);
        client.pipe(up);
      });
      client.on('data', (d: Buffer) => {
        const line = /^(GET|POST) (\S+) HTTP\/1\.1\r\n/.exec(d.toString('latin1'));
        if (line) asked.push(`${line[1]} ${line[2].split('?')[0]}`);
      });
      up.on('error', () => client.destroy());
      client.on('error', () => up.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    await addChannel(s, {
      type: 55,
      key: KEY,
      baseUrl: mock.url,
      models: ['sora-2'],
      setting: { proxy: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` },
    });
    await setOptions(s, { ModelPrice: { 'sora-2': 0.1 } });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await mock?.close();
    await new Promise((r) => proxy?.close(r));
  });

  it('create, poll and content go through the proxy; an oversized content is refused', async () => {
    const user = await addUser(s, { quota: 5_000_000 });
    const token = await addToken(s, user.id, { remain: 2_000_000, unlimited: false, name: 'proxied' });
    const sdk = new OpenAI({ apiKey: `sk-${token.key}`, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 20_000 });
    const video = await sdk.videos.create({
      model: 'sora-2',
      prompt: 'through the proxy',
      input_reference: await toFile(Buffer.from('frame'), 'f.png', { type: 'image/png' }),
    });
    const up = mock.calls.at(-1)!;
    expect(up.body).toMatchObject({ prompt: 'through the proxy', input_reference: 'frame' });
    const upstreamId = (await s.ctx.db
      .selectFrom('tasks')
      .select('private_data')
      .where('task_id', '=', video.id)
      .executeTakeFirstOrThrow()
      .then((r) => JSON.parse(r.private_data).upstream_task_id)) as string;
    mock.states.set(upstreamId, { status: 'completed', progress: 100 });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await sdk.videos.retrieve(video.id)).toMatchObject({ status: 'completed' });
    const part = await fetch(`${s.url}/v1/videos/${video.id}/content`, {
      headers: { authorization: `Bearer sk-${token.key}`, range: 'bytes=0-9' },
    });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(mock.content.subarray(0, 10))).toBe(true);
    expect(asked).toEqual(['POST /v1/videos', `GET /v1/videos/${upstreamId}`, `GET /v1/videos/${upstreamId}/content`]);

    mock.announce = VIDEO_CONTENT_MAX_BYTES + 1;
    const big = await fetch(`${s.url}/v1/videos/${video.id}/content`, {
      headers: { authorization: `Bearer sk-${token.key}` },
    });
    expect(big.status).toBe(502);
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe('video_content_failed');
    mock.announce = null;
  });
});
