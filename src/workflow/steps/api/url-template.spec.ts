import { StepError } from '../../sdk';
import { fixedOriginOf, renderUrl, urlOriginProblem } from './url-template';

describe('url templates of the api step', () => {
  describe('urlOriginProblem (checked when a definition is saved)', () => {
    it.each([
      'https://crm.example/customers/{{input.id}}',
      'https://crm.example/?q={{input.q}}#{{results.a}}',
      'https://crm.example\\{{input.id}}',
      '{{env.CRM_URL}}/customers/{{ input.id }}',
      '{{env.CRM_URL}}?q={{input.q}}',
      'https://{{env.CRM_HOST}}:{{env.CRM_PORT}}/{{user.id}}',
      '{{env.SCHEME}}://{{env.HOST}}/{{input.path}}',
      'https://crm.example',
    ])('accepts %s', (template) => {
      expect(urlOriginProblem(template)).toBeNull();
    });

    it.each([
      ['https://crm.example{{input.path}}', 'input.path'],
      ['{{input.target}}', 'input.target'],
      ['https://{{user.email}}.example/x', 'user.email'],
      ['https://crm.example:{{savedData.port}}/x', 'savedData.port'],
      ['{{results.lookup.data.base}}/x', 'results.lookup.data.base'],
      ['https://{{input.who}}@crm.example/x', 'input.who'],
      ['{{env.SCHEME}}://{{input.host}}/x', 'input.host'],
      ['{{env.CRM_URL}}{{input.path}}', 'input.path'],
      ['{{result.data.self}}', 'result.data.self'],
    ])('refuses %s (names %s)', (template, path) => {
      expect(urlOriginProblem(template)).toContain(`{{${path}}}`);
    });
  });

  describe('renderUrl (at run time)', () => {
    const values: Record<string, string> = {
      'input.id': '../admin/export?all=1#',
      'input.q': 'a&all=1 b',
      'input.at': '@evil.example/x',
      'input.port': '0',
      'input.empty': '',
      'env.BASE': 'https://crm.example/api',
      'env.HOST': 'crm.example',
    };
    const render = (template: string) => renderUrl(template, (path) => values[path]);

    it('percent-encodes every value but env ones, so each stays inside its component', () => {
      expect(render('https://crm.example/customers/{{input.id}}?q={{input.q}}')).toBe(
        'https://crm.example/customers/..%2Fadmin%2Fexport%3Fall%3D1%23?q=a%26all%3D1%20b',
      );
      expect(new URL(render('https://crm.example/customers/{{input.id}}')).pathname).toBe(
        '/customers/..%2Fadmin%2Fexport%3Fall%3D1%23',
      );
      expect(render('{{env.BASE}}/c/{{input.at}}')).toBe('https://crm.example/api/c/%40evil.example%2Fx');
      expect(render('https://{{env.HOST}}/{{input.empty}}')).toBe('https://crm.example/');
      expect(render('https://crm.example/orders')).toBe('https://crm.example/orders');
      expect(render('{{env.BASE}}/orders')).toBe('https://crm.example/api/orders');
    });

    it.each([
      'https://crm.example{{input.at}}',
      'https://crm.example:443{{input.port}}/x',
      'https://{{input.port}}.crm.example/',
    ])('refuses %s, whose origin a value would move (a definition saved before the rule)', (template) => {
      let thrown: unknown;
      try {
        render(template);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(StepError);
      expect(thrown).toMatchObject({ code: 'INVALID_URL', details: { reason: 'origin' } });
    });

    it('leaves a url that does not parse even without its values to the request, which refuses it', () => {
      expect(render('https://exa mple/{{input.empty}}')).toBe('https://exa mple/');
      expect(render('{{input.at}}')).toBe('%40evil.example%2Fx');
    });

    it('writes U+FFFD for a lone surrogate instead of throwing', () => {
      expect(renderUrl('https://crm.example/{{input.x}}', () => 'a\ud800b')).toBe(
        'https://crm.example/a%EF%BF%BDb',
      );
    });
  });

  describe('fixedOriginOf (where a saved request will go, for the secret binding)', () => {
    const env = (name: string) => ({ BASE: 'https://CRM.example:443', HOST: 'crm.example' })[name];
    it.each([
      ['https://crm.example/customers/{{input.id}}', 'https://crm.example'],
      ['{{env.BASE}}/customers/{{input.id}}', 'https://crm.example'],
      ['http://{{env.HOST}}:8080/x?k={{env.TOKEN}}', 'http://crm.example:8080'],
      ['{{env.UNSET}}/x', null],
      ['https://{{input.host}}/x', null],
      ['{{env.HOST}}/x', null],
    ])('%s -> %s', (template, origin) => {
      expect(fixedOriginOf(template, env)).toBe(origin);
    });
  });
});
