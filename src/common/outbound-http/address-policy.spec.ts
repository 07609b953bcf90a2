import { AddressPolicy, normaliseHost, refusalFor } from './address-policy';

describe('refusalFor', () => {
  it.each([
    // IPv4
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.1.1', 'linkLocal'],
    ['169.254.169.254', 'metadata'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['192.0.0.192', 'reserved'],
    ['240.0.0.1', 'reserved'],
    // IPv6
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['100::1', 'discard'],
    ['4000::1', 'reserved'],
    // IPv4 embedded in IPv6
    ['::ffff:127.0.0.1', 'ipv4Mapped loopback'],
    ['::ffff:7f00:1', 'ipv4Mapped loopback'],
    ['::ffff:10.1.2.3', 'ipv4Mapped private'],
    ['::ffff:169.254.169.254', 'ipv4Mapped metadata'],
    ['::ffff:0:127.0.0.1', 'rfc6145 loopback'],
    // ipaddr.js reads the dotted `::127.0.0.1` as `::ffff:127.0.0.1`; the verdict is the same, and the URL
    // parser and resolvers write that address as `::7f00:1` anyway.
    ['::127.0.0.1', 'ipv4Mapped loopback'],
    ['::7f00:1', 'ipv4Compatible loopback'],
    ['::a9fe:a9fe', 'ipv4Compatible metadata'],
    ['64:ff9b::127.0.0.1', 'rfc6052 loopback'],
    ['64:ff9b::a00:1', 'rfc6052 private'],
    ['64:ff9b:1::808:808', 'rfc6052'],
    ['2002:7f00:1::1', '6to4 loopback'],
    ['2002:c0a8:101::1', '6to4 private'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'teredo loopback'], // client ~0x80fffffe = 127.0.0.1
    ['2001:0:7f00:1::', 'teredo loopback'], // server 127.0.0.1
    // not an address
    ['example.com', 'not an IP address'],
    ['', 'not an IP address'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(refusalFor(address)).toBe(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '[2606:4700:4700::1111]',
  ])('allows %s', (address) => {
    expect(refusalFor(address)).toBeNull();
  });
});

describe('normaliseHost', () => {
  it.each([
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    ['[::FFFF:127.0.0.1]', '::ffff:7f00:1'],
    ['[0:0:0:0:0:0:0:1]', '::1'],
    ['127.0.0.1', '127.0.0.1'],
  ])('%s -> %s', (host, normalised) => {
    expect(normaliseHost(host)).toBe(normalised);
  });
});

describe('AddressPolicy.isExempt', () => {
  const policy = new AddressPolicy(['localhost', '127.0.0.1:8080', 'API.Internal', '[::1]:9000', 'fd00::5']);

  it.each([
    ['localhost', 80, true],
    ['localhost', 3000, true],
    ['LOCALHOST', 443, true],
    ['127.0.0.1', 8080, true],
    ['127.0.0.1', 8081, false],
    ['127.0.0.1', 80, false],
    ['api.internal', 1234, true],
    ['[::1]', 9000, true],
    ['[::1]', 9001, false],
    ['[fd00::5]', 443, true],
    ['[fd00:0::5]', 443, true],
    ['127.0.0.2', 8080, false],
    ['[::ffff:7f00:1]', 8080, false], // a mapped spelling is not the listed IPv4 host
    ['evil-localhost', 80, false],
    ['localhost.evil.com', 80, false],
  ])('%s:%d -> %s', (host, port, exempt) => {
    expect(policy.isExempt(host, port)).toBe(exempt);
  });

  it('exempts nothing by default', () => {
    expect(new AddressPolicy().isExempt('localhost', 80)).toBe(false);
    expect(new AddressPolicy(['', ' ']).isExempt('', 80)).toBe(false);
  });
});
