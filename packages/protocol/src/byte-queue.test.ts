import { describe, expect, it } from "vitest";
import { ByteQueue } from "./byte-queue.js";

function bytes(...values: number[]): Buffer {
  return Buffer.from(values);
}

describe("ByteQueue", () => {
  it("takes runs within one chunk and across chunks, in order", () => {
    const queue = new ByteQueue();
    queue.push(bytes(1, 2, 3));
    queue.push(bytes(4, 5));
    queue.push(Buffer.alloc(20_000, 6));
    expect(queue.length).toBe(20_005);
    expect([...queue.take(2)]).toEqual([1, 2]);
    expect([...queue.take(4)]).toEqual([3, 4, 5, 6]);
    expect(queue.take(19_999).every((value) => value === 6)).toBe(true);
    expect(queue.length).toBe(0);
    expect(() => queue.take(1)).toThrow(RangeError);
  });

  it("hands out bytes that later pushes never overwrite", () => {
    const queue = new ByteQueue();
    queue.push(bytes(1, 2));
    const first = queue.take(2);
    for (let value = 3; value < 200; value += 1) queue.push(bytes(value));
    expect([...first]).toEqual([1, 2]);
    const rest = queue.take(197);
    expect(rest[0]).toBe(3);
    expect(rest[196]).toBe(199);
  });

  it("keeps the bytes of many tiny pushes correct and in order", () => {
    const queue = new ByteQueue();
    const expected: number[] = [];
    for (let index = 0; index < 50_000; index += 1) {
      queue.push(bytes(index % 251));
      expected.push(index % 251);
      if (index % 999 === 0) expect([...queue.take(queue.length)]).toEqual(expected.splice(0));
    }
    expect([...queue.take(queue.length)]).toEqual(expected);
  });

  it("hands out a run inside one large chunk without copying it", () => {
    const queue = new ByteQueue();
    const large = Buffer.alloc(1024 * 1024, 1);
    queue.push(large);
    queue.push(bytes(9));
    expect(queue.take(large.length).buffer).toBe(large.buffer);
    expect([...queue.take(1)]).toEqual([9]);
  });

  it("forgets everything on clear", () => {
    const queue = new ByteQueue();
    queue.push(bytes(1, 2, 3));
    queue.clear();
    expect(queue.length).toBe(0);
    queue.push(bytes(4));
    expect([...queue.take(1)]).toEqual([4]);
  });
});
