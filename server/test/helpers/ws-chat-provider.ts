// A test-only provider that answers chat over a websocket (not in the production registry): the shape iFlytek Spark
// and the realtime APIs will take. The client's request is read into the hub with its format's codec, sent upstream
// as one JSON text frame in OpenAI's chat shape with the channel's key, and the upstream's frames (one OpenAI chat
// chunk each) go through the websocket transport, the ws-json framing and the translated lane's pump to the client,
// in the client's format. It proves transport + framing + pump end to end at the module level.
import type { HttpResponse } from '../../src/lib/http-response.js';
import { codecFor, type WireFormat } from '../../src/relay/formats/index.js';
import { pumpTranslated, type TranslateResult } from '../../src/relay/stream/translate.js';
import { wsJsonFraming } from '../../src/relay/stream/ws-json.js';
import type { WebSocketTransport } from '../../src/relay/transport/websocket.js';

export interface WsChatCall {
  transport: WebSocketTransport;
  /** the upstream's ws:// URL */
  url: string;
  apiKey: string;
  /** the channel's proxy (channel-setting.ts proxyOf) */
  proxy?: string | null;
  clientFormat: WireFormat;
  /** the client's request body, in its format */
  body: Record<string, any>;
  model: string;
  res: HttpResponse;
  /** the client departed */
  signal?: AbortSignal;
}

export async function streamChatOverWebsocket(c: WsChatCall): Promise<TranslateResult> {
  const client = codecFor(c.clientFormat);
  const upstream = codecFor('openai');
  const hub = client.requestToHub(c.body);
  const socket = await c.transport.open({
    url: c.url,
    headers: { authorization: `Bearer ${c.apiKey}` },
    proxy: c.proxy,
    headersTimeout: 5_000,
    bodyTimeout: 5_000,
    signal: c.signal,
  });
  await socket.send(JSON.stringify(upstream.requestFromHub(hub, { model: c.model, stream: true })));
  return pumpTranslated(socket.stream(), {
    res: c.res,
    headers: {},
    framing: wsJsonFraming(),
    decoder: upstream.streamToHub({ id: 'chatcmpl-ws', model: c.model }),
    encoder: client.streamFromHub({ id: 'chatcmpl-ws', model: c.model, includeUsage: true }),
  });
}
