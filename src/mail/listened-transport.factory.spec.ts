import { Logger } from '@nestjs/common';
import { ListenedTransportFactory } from './listened-transport.factory';

describe('ListenedTransportFactory', () => {
  it("a transport's own error (an OAuth2 token it cannot renew) is logged, not thrown from the event", () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const factory = new ListenedTransportFactory({ transport: { url: 'smtp://127.0.0.1:1', pool: true } });
      const mailer = factory.createTransport() as unknown as {
        transporter: { emit(...args: unknown[]): void };
      };
      // nodemailer re-emits the transport's 'error' on the transporter; without a listener, emit throws.
      expect(() => mailer.transporter.emit('error', new Error('token refresh failed'))).not.toThrow();
      expect(warn).toHaveBeenCalledWith({
        msg: 'SMTP transport error: token refresh failed',
        dependency: 'smtp',
        code: 'SMTP_TRANSPORT_ERROR',
      });
    } finally {
      warn.mockRestore();
    }
  });
});
