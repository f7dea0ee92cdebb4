// SPDX-License-Identifier: Apache-2.0
// The event-storm program of bench/relay: a thread calls Storm.hit() in a
// tight loop, so a MethodEntry request with ClassMatch "Storm" produces
// events as fast as the VM can post them. Between bursts of 10000 calls it
// sleeps 1 ms, so an idle run costs little CPU on a shared machine while a
// storm is limited by event delivery, not by the sleeps. Prints "storm ready".
public class Storm {
    static volatile long sink;

    static void hit(int v) {
        sink += v;
    }

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> {
            while (true) {
                for (int i = 0; i < 10000; i++)
                    hit(i);
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "storm");
        t.setDaemon(true);
        t.start();
        System.out.println("storm ready");
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : Long.MAX_VALUE / 1000;
        Thread.sleep(seconds * 1000);
    }
}
