// GET /v1/models and /v1/models/:model (new-api-compat.md §4.10): the models the caller's token may use, answered
// locally.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import type { RelayServices } from '../services.js';
import { isBuiltInModel, modelObject } from '../../services/model-objects.js';
import { isUsableGroup } from '../../services/groups.js';
import { countedAs, getCaller, sendJsonAnswer } from './token-get.js';
import type { FastifyRequest } from 'fastify';
import type { RelayCaller } from '../auth.js';
import { RelayError, sendRelayError } from '../errors.js';
import { geminiModel, geminiModelList } from '../formats/gemini/index.js';

/** The models the caller's token may use: its model limits, else its group's. */
function callerModels(ctx: AppContext, svc: RelayServices, caller: RelayCaller): string[] {
  const token = caller.token!;
  if (token.modelLimitsEnabled) return [...(token.modelLimits ?? [])];
  let group = caller.user.group;
  if (token.group && isUsableGroup(ctx, group, token.group)) group = token.group;
  return svc.channels.modelsOfGroup(group);
}

/** Which list a GET /v1/models caller expects (new-api-compat.md §4.1): Claude's, Gemini's or OpenAI's. */
function listFormat(req: FastifyRequest): 'anthropic' | 'gemini' | 'openai' {
  const h = req.headers;
  if (h['x-api-key'] && h['anthropic-version']) return 'anthropic';
  if (h['x-goog-api-key'] || /[?&]key=/.test(req.url)) return 'gemini';
  return 'openai';
}

function claudeModelList(ids: string[]) {
  const data = ids.map((id) => ({ type: 'model', id, display_name: id, created_at: '2024-01-01T00:00:00Z' }));
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

function modelKnown(svc: RelayServices, id: string): boolean {
  return isBuiltInModel(id) || svc.channels.all().some((c) => c.status === 1 && c.models.includes(id));
}

export function registerModelList(app: FastifyInstance, ctx: AppContext, svc: RelayServices): void {
  const counted = { onResponse: countedAs(svc, 'models') };
  const countedGemini = { onResponse: countedAs(svc, 'models', 'gemini') };
  app.get('/v1/models', counted, async (req, reply) => {
    const caller = await getCaller(ctx, svc, req, reply);
    if (!caller) return;
    const ids = callerModels(ctx, svc, caller);
    const format = listFormat(req);
    if (format === 'anthropic') return sendJsonAnswer(req, reply, 200, claudeModelList(ids));
    if (format === 'gemini') return sendJsonAnswer(req, reply, 200, geminiModelList(ids));
    sendJsonAnswer(req, reply, 200, { success: true, data: ids.map(modelObject) });
  });

  app.get('/v1beta/models', countedGemini, async (req, reply) => {
    const caller = await getCaller(ctx, svc, req, reply, 'gemini');
    if (!caller) return;
    sendJsonAnswer(req, reply, 200, geminiModelList(callerModels(ctx, svc, caller)));
  });

  app.get('/v1beta/models/:model', countedGemini, async (req, reply) => {
    const caller = await getCaller(ctx, svc, req, reply, 'gemini');
    if (!caller) return;
    const id = (req.params as { model: string }).model.replace(/^models\//, '');
    if (callerModels(ctx, svc, caller).includes(id)) return sendJsonAnswer(req, reply, 200, geminiModel(id));
    sendRelayError(
      reply.raw,
      new RelayError(
        404,
        `models/${id} is not found for API version v1beta`,
        'invalid_request_error',
        'model_not_found',
      ),
      req.id,
      req.headers,
      'gemini',
    );
  });

  app.get('/v1/models/:model', counted, async (req, reply) => {
    const caller = await getCaller(ctx, svc, req, reply);
    if (!caller) return;
    const id = (req.params as { model: string }).model;
    if (modelKnown(svc, id)) return sendJsonAnswer(req, reply, 200, modelObject(id));
    sendJsonAnswer(req, reply, 200, {
      error: {
        message: `The model '${id}' does not exist`,
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_found',
      },
    });
  });
}
