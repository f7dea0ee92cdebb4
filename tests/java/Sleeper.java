// SPDX-License-Identifier: Apache-2.0
// A small program for integration tests: a few named threads doing work,
// and a loop with a stable line for breakpoints (Sleeper.java:17).
public class Sleeper {
    static volatile long counter;

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 3; i++) {
            Thread t = new Thread(() -> { while (true) { counter++; try { Thread.sleep(5); } catch (InterruptedException e) { return; } } }, "worker-" + i);
            t.setDaemon(true);
            t.start();
        }
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : Integer.MAX_VALUE;
        for (int round = 0; round < rounds; round++) {
            int local = round * 2;
            System.out.println("tick " + local);
            tick(local);
            Thread.sleep(200);
        }
    }

    static void tick(int value) {
        counter += value;
    }
}
