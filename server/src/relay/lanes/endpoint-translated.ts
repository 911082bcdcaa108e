// The endpoint-translated lane: a mode without a hub form (embeddings) whose provider speaks another format, served by
// the mode's own translation to that format (modes/embeddings-translate.ts) and back.
import { refusedRequest } from '../attempt-result.js';
import { FormatError } from '../formats/codec.js';
import { jsonAnswer, jsonAnswerOfStream, type AnswerConversion } from './json-answer.js';
import type { Lane, LaneAttempt } from './lane.js';

export const endpointTranslatedLane: Lane = {
  native: false,
  body(l) {
    try {
      return translatedModeBody(l);
    } catch (e) {
      if (!(e instanceof FormatError)) throw e;
      return refusedRequest(e);
    }
  },
  answer: (l) => (l.a.isStream ? jsonAnswerOfStream(l, modeAnswer) : jsonAnswer(l, modeAnswer)),
};

function translatedModeBody(l: LaneAttempt): Buffer {
  const body = l.translation!.request(l.a.body, l.info.upstreamModel);
  if (l.a.channel.paramOverride) Object.assign(body, l.a.channel.paramOverride);
  return Buffer.from(JSON.stringify(body));
}

/** The provider's whole answer in the client's shape, with its usage. */
const modeAnswer: AnswerConversion = (l, buf) => {
  const { body, usage } = l.translation!.response(JSON.parse(buf.toString('utf8')), {
    model: l.a.model,
    request: l.a.body,
    promptTokens: l.a.prompt,
  });
  return { body: Buffer.from(JSON.stringify(body)), usage };
};
