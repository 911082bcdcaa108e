// The gateway's own Midjourney errors and how the client receives them (new-api's controller/relay.go): 400
// `{description:"<description> <result>", type:"upstream_error", code}`, or 429 for code 30 (the group's load is
// saturated) with new-api's message as the result. Codes: 4 = request error, 5 = unknown, 30 = saturated.

export const MJ_CODE = {
  submitted: 1,
  noAccountInstance: 3,
  requestError: 4,
  unknown: 5,
  exists: 21,
  queued: 22,
  queueFull: 23,
  bannedPrompt: 24,
  saturated: 30,
} as const;

export interface MjLocalError {
  code: number;
  description: string;
  result?: string;
}

export const MJ_SATURATED_MESSAGE = '当前分组负载已饱和，请稍后再试，或升级账户以提升服务质量。';

export function mjRequestError(description: string): MjLocalError {
  return { code: MJ_CODE.requestError, description };
}

export interface MjErrorAnswer {
  status: number;
  body: { description: string; type: 'upstream_error'; code: number };
}

/** The answer a local error gets. */
export function mjErrorAnswer(err: MjLocalError): MjErrorAnswer {
  const saturated = err.code === MJ_CODE.saturated;
  const result = saturated ? MJ_SATURATED_MESSAGE : (err.result ?? '');
  return {
    status: saturated ? 429 : 400,
    body: { description: `${err.description} ${result}`, type: 'upstream_error', code: err.code },
  };
}
