// The official TypeScript MCP SDK as a stdio server whose tool asks its user
// for input mid-call (elicitation/create). Each start of the tool appends a
// line to the file $MCP_NODE_LOG.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { appendFileSync } from 'node:fs';
import { z } from 'zod';

const server = new McpServer({ name: 'warehouse', version: '1.0.0' });
server.registerTool(
  'ship',
  { description: 'Ship an order; asks where to.', inputSchema: { order_id: z.string() } },
  async ({ order_id }) => {
    appendFileSync(process.env.MCP_NODE_LOG, `ship ${order_id}\n`);
    const r = await server.server.elicitInput({
      message: `Ship order ${order_id} to which address?`,
      requestedSchema: { type: 'object', properties: { address: { type: 'string', minLength: 3 } }, required: ['address'] },
    });
    if (r.action !== 'accept') {
      return { content: [{ type: 'text', text: `Not shipped: ${r.action}` }] };
    }
    return { content: [{ type: 'text', text: `Shipped ${order_id} to ${r.content.address}` }] };
  },
);
await server.connect(new StdioServerTransport());
