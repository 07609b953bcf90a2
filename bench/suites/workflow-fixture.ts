import { createServer, type Server } from 'node:http';

export const RECEIVER_PORT = 3934;

/** The loopback server the workflow's `api` step posts to. */
export function startReceiver(port = RECEIVER_PORT): Promise<Server> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end('{"accepted":true}');
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

/** The benchmark workflow's steps: validate -> save -> transform -> api to the receiver (docs/design.md section 8). */
export function benchWorkflowSteps(configId: string, receiverPort = RECEIVER_PORT) {
  return [
    { name: 'check', type: 'validate', config: { configId } },
    { name: 'store', type: 'save', config: { configId } },
    { name: 'shape', type: 'transform', config: { mapping: { who: 'name', city: 'city' } } },
    {
      name: 'forward',
      type: 'api',
      config: {
        url: `http://127.0.0.1:${receiverPort}/orders`,
        method: 'POST',
        payload: { id: '{{savedData._id}}', shape: '{{results.shape}}' },
      },
    },
  ];
}

/** The benchmark workflow, created through the API; its id. */
export async function createWorkflow(
  serviceUrl: string,
  token: string,
  configId: string,
  receiverPort = RECEIVER_PORT,
): Promise<string> {
  const response = await fetch(`${serviceUrl}/api/workflow`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      name: 'bench intake',
      type: 'save',
      config: { steps: benchWorkflowSteps(configId, receiverPort) },
    }),
  });
  if (response.status !== 201)
    throw new Error(`workflow create failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}
