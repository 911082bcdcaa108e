// The client address behind proxies (lib/ip-match.ts clientIpOf): proxy-addr's rule, as Fastify applies it.
import { describe, expect, it } from 'vitest';
import { clientIpOf, proxyTrust } from '../../src/lib/ip-match.js';

describe('clientIpOf', () => {
  it('trusts every hop when no proxy list is set: the left-most entry wins', () => {
    expect(clientIpOf('127.0.0.1', undefined, null)).toBe('127.0.0.1');
    expect(clientIpOf('127.0.0.1', ' 1.1.1.1 , 2.2.2.2', null)).toBe('1.1.1.1');
  });

  it('trusts only loopback and private peers by default: a public client cannot claim an address', () => {
    const t = proxyTrust([]);
    for (const peer of [
      '198.51.100.9',
      '8.8.8.8',
      '172.32.0.1',
      '2001:db8::1',
      '::ffff:198.51.100.9',
      '::ffff:c633:6409',
    ]) {
      expect(clientIpOf(peer, '203.0.113.7', t)).toBe(peer);
    }
    for (const peer of [
      '127.0.0.1',
      '127.8.9.1',
      '::1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.254',
      '192.168.1.1',
      'fd00::5',
      '::ffff:10.0.0.5',
      '::ffff:7f00:1',
    ]) {
      expect(clientIpOf(peer, '203.0.113.7', t)).toBe('203.0.113.7');
    }
    // behind a private proxy, a forged entry left of a public hop is not believed
    expect(clientIpOf('10.0.0.5', '203.0.113.7, 198.51.100.9', t)).toBe('198.51.100.9');
    expect(clientIpOf('10.0.0.5', '203.0.113.7, 192.168.0.9', t)).toBe('203.0.113.7');
  });

  it('trusts every hop with TRUSTED_PROXIES=*, as new-api', () => {
    expect(proxyTrust(['*'])).toBeNull();
    expect(clientIpOf('198.51.100.9', '203.0.113.7, 10.0.0.1', proxyTrust(['*']))).toBe('203.0.113.7');
  });

  it('matches IPv4-mapped ranges as their IPv4 ranges', () => {
    const t = proxyTrust(['::ffff:10.0.0.0/104']);
    expect(clientIpOf('10.200.0.1', '203.0.113.7', t)).toBe('203.0.113.7');
    expect(clientIpOf('11.0.0.1', '203.0.113.7', t)).toBe('11.0.0.1');
  });

  it('walks from the socket to the left and stops at the first hop not trusted', () => {
    const t = proxyTrust(['10.0.0.0/8', '::1']);
    // a client connecting directly cannot claim an address
    expect(clientIpOf('198.51.100.9', '203.0.113.7', t)).toBe('198.51.100.9');
    expect(clientIpOf('10.0.0.5', '203.0.113.7', t)).toBe('203.0.113.7');
    expect(clientIpOf('::1', '203.0.113.7, 10.9.9.9', t)).toBe('203.0.113.7');
    expect(clientIpOf('::ffff:10.0.0.5', '1.2.3.4, 5.6.7.8', t)).toBe('5.6.7.8');
    // every hop trusted: the left-most
    expect(clientIpOf('10.0.0.5', '10.0.0.1, 10.0.0.2', t)).toBe('10.0.0.1');
    expect(clientIpOf('10.0.0.5', undefined, t)).toBe('10.0.0.5');
  });
});
