// The addresses of this host's own network interfaces. A host with a public address on an interface (a VPS, a cloud
// instance with a public IPv6) serves its admin ports, databases and the gateway itself on that address: a webhook or
// an image URL naming it reaches this machine as surely as 127.0.0.1 does, without being in any special-purpose range.
// Read from os.networkInterfaces() (every interface, up or down) and re-read every few seconds, so an address that
// DHCP, SLAAC or a failover adds is refused within moments, while a busy sender does not list interfaces per connection.
// A public address the host is reached at but does not carry (a cloud provider's 1:1 NAT) cannot be seen from here.
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { isSpecialPurposeAddress, reachedAddresses } from './special-addresses.js';

export type InterfaceLister = () => NodeJS.Dict<NetworkInterfaceInfo[]>;

/** how long one reading of the interfaces is used */
export const HOST_ADDRESSES_REFRESH_MS = 5_000;

export class HostAddresses {
  private addresses = new Set<string>();
  private readAt = -Infinity;

  constructor(
    /** the interface list; os.networkInterfaces unless a test injects one */
    readonly list: InterfaceLister = networkInterfaces,
  ) {}

  /** Whether `address`, or the IPv4 address it carries, is one of this host's. */
  has(address: string): boolean {
    const own = this.current();
    return reachedAddresses(address).some((a) => own.has(a));
  }

  private current(): Set<string> {
    const now = performance.now();
    if (now - this.readAt < HOST_ADDRESSES_REFRESH_MS) return this.addresses;
    const next = new Set<string>();
    for (const infos of Object.values(this.list()))
      for (const info of infos ?? []) {
        // a loopback interface's 127.0.0.1 and ::1 are refused by their range already (and a test's listener there
        // may stand for a public host, see safe-fetch.ts); a public address put on lo (an LVS VIP) still counts
        if (info.internal && isSpecialPurposeAddress(info.address)) continue;
        for (const a of reachedAddresses(info.address)) next.add(a);
      }
    this.addresses = next;
    this.readAt = now;
    return next;
  }
}

/** The real interfaces, shared by every client in the process (they are the process's host's). */
export const thisHost = new HostAddresses();
