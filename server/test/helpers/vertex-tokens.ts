// Vertex AI tokens for a parsed service account, as the relay gets them: the relay's credential cache with Vertex's
// exchange, pointed at a mock token endpoint. For tests that hold a ServiceAccount rather than a channel's key.
import { CredentialCache } from '../../src/relay/credential-cache.js';
import type { ServiceAccount } from '../../src/relay/providers/vertex/credentials.js';
import { vertexCredential } from '../../src/relay/providers/vertex/token.js';
import type { ProviderSettings } from '../../src/relay/providers/types.js';

export class VertexTokenCache {
  private readonly cache: CredentialCache;
  private readonly settings: ProviderSettings;

  constructor(options: { tokenUrl?: string; now?: () => number; maxAccounts?: number } = {}) {
    this.cache = new CredentialCache({ now: options.now, maxEntries: options.maxAccounts });
    // the exchange reads only the token endpoint of the settings
    this.settings = { vertexTokenUrl: options.tokenUrl } as ProviderSettings;
  }

  get size(): number {
    return this.cache.size;
  }

  get(sa: ServiceAccount): Promise<string> {
    return this.cache.get(vertexCredential, JSON.stringify(sa), this.settings);
  }

  invalidate(sa: ServiceAccount): void {
    this.cache.invalidate(vertexCredential, JSON.stringify(sa));
  }
}
