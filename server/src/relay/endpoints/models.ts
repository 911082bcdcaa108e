// GET /v1/models and /v1/models/:model (new-api-compat.md §4.10): the models the caller's token may use, answered
// locally.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import type { RelayServices } from '../services.js';
import { isBuiltInModel, modelObject } from '../../services/model-objects.js';
import { isUsableGroup } from '../../services/groups.js';
import { getCaller, sendJsonAnswer } from './token-get.js';

export function registerModelList(app: FastifyInstance, ctx: AppContext, svc: RelayServices): void {
  app.get('/v1/models', async (req, reply) => {
    const caller = await getCaller(ctx, svc, req, reply);
    if (!caller) return;
    let ids: string[];
    const token = caller.token!;
    if (token.modelLimitsEnabled) ids = [...(token.modelLimits ?? [])];
    else {
      let group = caller.user.group;
      if (token.group && isUsableGroup(ctx, group, token.group)) group = token.group;
      ids = svc.channels.modelsOfGroup(group);
    }
    sendJsonAnswer(req, reply, 200, { success: true, data: ids.map(modelObject) });
  });

  app.get('/v1/models/:model', async (req, reply) => {
    const caller = await getCaller(ctx, svc, req, reply);
    if (!caller) return;
    const id = (req.params as { model: string }).model;
    const known = isBuiltInModel(id) || svc.channels.all().some((c) => c.status === 1 && c.models.includes(id));
    if (known) return sendJsonAnswer(req, reply, 200, modelObject(id));
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
