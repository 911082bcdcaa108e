// The task platforms that make videos (a module of its own: the console's task log names them without loading the
// video handlers).

/** the task platforms that make videos, whose tasks the video routes submit and show */
export const VIDEO_PLATFORMS: readonly string[] = [
  'sora',
  'kling',
  'veo',
  'vidu',
  'doubao-video',
  'hailuo',
  'wan',
  'jimeng',
  // Veo on Vertex AI channels (type 41)
  'vertex-veo',
];

/**
 * A finished video task's result URL (new-api's result_url): its platform's address, else the gateway's content
 * route, where the video is served from whatever the upstream keeps (inline bytes, a file id, a keyed endpoint).
 */
export function videoResultUrl(publicId: string, platformUrl: string): string {
  return platformUrl || `/v1/videos/${publicId}/content`;
}
