import { createTransport } from 'nodemailer';
import { parseMessage, startSmtpTestServer } from './smtp-test-server';

describe('startSmtpTestServer', () => {
  it('receives over real SMTP on 127.0.0.1 and decodes transfer-encoded parts and encoded-word subjects', async () => {
    const server = await startSmtpTestServer();
    const transport = createTransport({ url: server.url });
    try {
      expect(server.url).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
      await transport.sendMail({
        from: 'from@example.com',
        to: 'to@example.com',
        subject: 'Üdvözlet – ünnepi ajánlat',
        text: `Hosszú sor ${'é'.repeat(100)}`,
        html: '<p>bináris</p>',
      });
      const [message] = await server.waitFor(1, 2000);
      expect(message.envelope).toEqual({ from: 'from@example.com', to: ['to@example.com'] });
      expect(message.subject).toBe('Üdvözlet – ünnepi ajánlat');
      expect(message.text).toBe(`Hosszú sor ${'é'.repeat(100)}`);
      expect(message.html).toBe('<p>bináris</p>');
      expect(message.raw).toContain('\r\n');
    } finally {
      transport.close();
      await server.close();
    }
  });

  it('waitFor rejects when too few messages arrive in time', async () => {
    const server = await startSmtpTestServer();
    try {
      await expect(server.waitFor(1, 50)).rejects.toThrow('Expected 1 message(s) within 50 ms, got 0');
    } finally {
      await server.close();
    }
  });

  it('parseMessage decodes a base64 body and a base64 encoded-word subject', () => {
    const raw = [
      `Subject: =?UTF-8?B?${Buffer.from('árvíz').toString('base64')}?=`,
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('árvíz tűrő').toString('base64'),
      '',
    ].join('\r\n');
    expect(parseMessage(raw)).toMatchObject({ subject: 'árvíz', text: 'árvíz tűrő' });
  });
});
