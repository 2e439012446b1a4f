// The agenthost benchmark loop with the Vercel AI SDK: streamText with one
// JavaScript echo tool against the fake model at BASE_URL, for STEPS steps
// (one tool call per step, then a text answer). Run by `go run ./bench`.
//
//	node bench/aisdk/loop.mjs BASE_URL STEPS
import { streamText, tool, stepCountIs } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';

const [baseURL, stepsArg] = process.argv.slice(2);
const steps = Number(stepsArg);
if (!baseURL || !(steps >= 1)) {
  console.error('usage: node loop.mjs BASE_URL STEPS');
  process.exit(2);
}
const provider = createOpenAICompatible({ name: 'fake', baseURL });
const result = streamText({
  model: provider('fake-model'),
  system: 'You are a benchmark agent.',
  prompt: 'Read the lines, one per step.',
  tools: {
    echo: tool({
      description: 'Return the given text unchanged.',
      inputSchema: z.object({ text: z.string() }),
      execute: async ({ text }) => text,
    }),
  },
  stopWhen: stepCountIs(steps),
});
let text = '';
for await (const part of result.textStream) text += part;
const done = await result.steps;
if (done.length !== steps) {
  console.error(`ran ${done.length} steps, want ${steps}`);
  process.exit(1);
}
console.log(text);
