// The third-party login providers this server implements, by route segment (/api/oauth/<key>).
import { discord } from './discord.js';
import { github } from './github.js';
import { linuxdo } from './linuxdo.js';
import { oidc } from './oidc.js';
import type { OAuthProvider } from './provider.js';

export const OAUTH_PROVIDERS: readonly OAuthProvider[] = [github, linuxdo, discord, oidc];
