# One ns-2 TCP flow over a line a - r1 - r2 - b (1 Gb/s 1 ms, 10 Mb/s 10 ms, 1 Gb/s 1 ms),
# with ErrorModel/Lists that CE-mark (r1 -> r2) and drop (r2 -> b) chosen data packets.
# The ecnsim twin of each run is a test in crates/ecnsim-core/tests/it/ns2_dialogues.rs.
#
#   ns dialogue.tcl VARIANT BYTES DROPS MARKS [OPTION=VALUE ...]
#
# VARIANT is Tahoe (Agent/TCP), Reno, Newreno or Sack1; DROPS and MARKS are comma-separated
# ordinals (from 1) of the data packets passing, or "-" for none; options set
# Agent/TCP variables (ecn_=1, SetCWRonRetransmit_=false, singledup_=1, window_=40, ...), or
# Agent/TCP/Newreno ones for newreno_changes_, newreno_changes1_, partial_window_deflation_ and
# exit_recovery_fix_.
# ns-2's defaults of 2001-04-23..2001-05-14 are set first, as ns-2's test suites pin them.
#
# Prints ns-2's trace of cwnd_ and ssthresh_, each data packet sent ("send t seqno" and
# "cwr" if it carries CWR) and dropped ("drop t seqno"), and a summary:
# "summary sent rexmit timeouts ecn_responses delivered_packets".

Agent/TCP set tcpTick_ 0.1
Agent/TCP set rfc2988_ false
Agent/TCP set minrto_ 0
Agent/TCP set maxrto_ 100000
Agent/TCP set rtxcur_init_ 6.0
Agent/TCP set updated_rttvar_ false
Agent/TCP set precisionReduce_ false
Agent/TCP set useHeaders_ false
Agent/TCP set windowInit_ 1
Agent/TCP set singledup_ 0
Agent/TCP set syn_ false
Agent/TCP set delay_growth_ false
Agent/TCP set SetCWRonRetransmit_ true
Agent/TCP set packetSize_ 1000
Agent/TCP set window_ 20
Agent/TCP set bugFix_ true
Agent/TCP/Newreno set newreno_changes_ 0
Agent/TCP/Newreno set newreno_changes1_ 0
Agent/TCP/Newreno set partial_window_deflation_ 0
Agent/TCP/Newreno set exit_recovery_fix_ 0

set variant [lindex $argv 0]
set bytes [lindex $argv 1]
set drops [lindex $argv 2]
set marks [lindex $argv 3]
foreach setting [lrange $argv 4 end] {
    set kv [split $setting =]
    set name [lindex $kv 0]
    if {[lsearch {newreno_changes_ newreno_changes1_ partial_window_deflation_ exit_recovery_fix_} $name] >= 0} {
        Agent/TCP/Newreno set $name [lindex $kv 1]
    } else {
        Agent/TCP set $name [lindex $kv 1]
    }
}

set ns [new Simulator]
set a [$ns node]
set r1 [$ns node]
set r2 [$ns node]
set b [$ns node]
$ns duplex-link $a $r1 1Gb 1ms DropTail
$ns duplex-link $r1 $r2 10Mb 10ms DropTail
$ns duplex-link $r2 $b 1Gb 1ms DropTail
$ns queue-limit $r1 $r2 1000
$ns queue-limit $a $r1 1000

# Error models count every packet they see (only data travels this way) and act on the
# listed ones: CE marks on r1 -> r2, drops on r2 -> b (so a run can do both).
proc ordinals {s} {
    set l {}
    if {$s != "-"} { foreach n [split $s ,] { lappend l [expr $n - 1] } }
    return $l
}
if {[llength [ordinals $marks]] > 0} {
    set mark [new ErrorModel/List]
    $mark set markecn_ true
    $mark droplist [ordinals $marks]
    $ns lossmodel $mark $r1 $r2
}
set drop [new ErrorModel/List]
$drop droplist [ordinals $drops]
$ns lossmodel $drop $r2 $b

if {$variant == "Tahoe"} {
    set tcp [new Agent/TCP]
} elseif {$variant == "Sack1"} {
    set tcp [new Agent/TCP/Sack1]
} else {
    set tcp [new Agent/TCP/$variant]
}
if {$variant == "Sack1"} { set sink [new Agent/TCPSink/Sack1] } else { set sink [new Agent/TCPSink] }
$ns attach-agent $a $tcp
$ns attach-agent $b $sink
$ns connect $tcp $sink
$tcp set fid_ 1

set out [open "|cat" w]
$tcp attach $out
$tcp trace cwnd_
$tcp trace ssthresh_

# Packet events on r1 -> r2: sends (+ at a -> r1), drops and marks at the error model.
set tr [open "|awk {\$1==\"+\" && \$3==0 && \$5==\"tcp\" {print \"send\", \$2, \$11, (\$7 ~ /A/ ? \"cwr\" : \"\")} \$1==\"d\" && \$5==\"tcp\" {print \"drop\", \$2, \$11}}" w]
$ns trace-queue $a $r1 $tr
$ns trace-queue $r2 $b $tr

set ftp [$tcp attach-app FTP]
$ns at 0.0 "$ftp send $bytes"
proc finish {} {
    global tcp sink ns tr out
    puts "summary [$tcp set ndatapack_] [$tcp set nrexmitpack_] [$tcp set nrexmit_] [$tcp set necnresponses_] [expr [$tcp set ack_] + 1]"
    flush stdout
    close $tr
    close $out
    exit 0
}
$ns at 30.0 "finish"
$ns run
