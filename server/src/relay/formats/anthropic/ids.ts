/** A Claude message id for a client: the hub's own when it already is one, else one made from the request id. */
export function claudeMessageId(hubId: string | undefined, requestId: string): string {
  return hubId && hubId.startsWith('msg_') ? hubId : `msg_${requestId}`;
}

/** A Claude tool_use id for a call whose provider gave none. */
export function claudeToolUseId(requestId: string, index: number): string {
  return `toolu_${requestId}_${index}`;
}
