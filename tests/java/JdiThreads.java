// SPDX-License-Identifier: Apache-2.0
// A small JDI program for integration tests: attach to HOST:PORT, list the
// threads with their group and status, suspend the VM, count each thread's
// frames, resume, dispose, and print "jdi ok N" (N = threads seen).
// Usage: java JdiThreads HOST PORT
import com.sun.jdi.Bootstrap;
import com.sun.jdi.IncompatibleThreadStateException;
import com.sun.jdi.ThreadGroupReference;
import com.sun.jdi.ThreadReference;
import com.sun.jdi.VirtualMachine;
import com.sun.jdi.connect.AttachingConnector;
import com.sun.jdi.connect.Connector;
import java.util.Map;

public class JdiThreads {
    static String status(int s) {
        switch (s) {
        case ThreadReference.THREAD_STATUS_ZOMBIE: return "zombie";
        case ThreadReference.THREAD_STATUS_RUNNING: return "running";
        case ThreadReference.THREAD_STATUS_SLEEPING: return "sleeping";
        case ThreadReference.THREAD_STATUS_MONITOR: return "monitor";
        case ThreadReference.THREAD_STATUS_WAIT: return "wait";
        case ThreadReference.THREAD_STATUS_NOT_STARTED: return "not-started";
        default: return "unknown";
        }
    }

    public static void main(String[] args) throws Exception {
        AttachingConnector socket = null;
        for (AttachingConnector c : Bootstrap.virtualMachineManager().attachingConnectors())
            if (c.name().equals("com.sun.jdi.SocketAttach"))
                socket = c;
        if (socket == null)
            throw new IllegalStateException("no SocketAttach connector");
        Map<String, Connector.Argument> a = socket.defaultArguments();
        a.get("hostname").setValue(args[0]);
        a.get("port").setValue(args[1]);
        a.get("timeout").setValue("10000");
        VirtualMachine vm = socket.attach(a);
        System.out.println("vm " + vm.name());
        int n = 0;
        for (ThreadReference t : vm.allThreads()) {
            ThreadGroupReference g = t.threadGroup(); // null once the thread has terminated
            System.out.println("thread " + t.name() + " group=" + (g == null ? "-" : g.name()) + " status=" + status(t.status()));
            n++;
        }
        vm.suspend();
        for (ThreadReference t : vm.allThreads()) {
            String frames;
            try {
                frames = Integer.toString(t.frameCount());
            } catch (IncompatibleThreadStateException | IllegalThreadStateException e) {
                frames = "none"; // terminated meanwhile
            }
            System.out.println("frames " + t.name() + " " + frames + " suspended=" + t.isSuspended());
        }
        vm.resume();
        vm.dispose();
        System.out.println("jdi ok " + n);
    }
}
