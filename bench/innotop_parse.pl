#!/usr/bin/perl
# Time innotop's InnoDBParser over the same fixtures as bench_parse.py, for a same-run ratio.
#
#   perl bench/innotop_parse.pl [--innotop /usr/bin/innotop] [--repeats N] [--full 0|1] FILE...
#
# The parser is GPL code that stays in the installed innotop (Debian package "innotop"): its
# "package InnoDBParser;" block is read from that file and compiled at run time; nothing of it
# is copied into this repository. Prints one line per file: "<µs per parse> <file>" (best of 3
# rounds of N parses, process CPU time), or "failed <error> <file>" when innotop dies on the text,
# then "mean <µs> over <n>".
use strict;
use warnings;
use Getopt::Long;
use Time::HiRes qw(clock_gettime CLOCK_PROCESS_CPUTIME_ID);

my ($innotop, $repeats, $full) = ('/usr/bin/innotop', 20, 1);
GetOptions('innotop=s' => \$innotop, 'repeats=i' => \$repeats, 'full=i' => \$full) or die "bad options\n";

open(my $fh, '<', $innotop) or die "cannot read $innotop: $!\n";
my $source = do { local $/; <$fh> };
close $fh;
my ($package) = $source =~ /^(package InnoDBParser;.*?^1;)\s*$/ms
   or die "no InnoDBParser package in $innotop\n";
eval "$package\n1;" or die "InnoDBParser did not compile: $@\n";

sub version_for {  # innotop picks its header-time regex from the server version it is given
   my ($text) = @_;
   return $text =~ /^\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d .*INNODB MONITOR OUTPUT/m ? '5.7.0' : '5.5.0';
}

my $parser = InnoDBParser->new();
my @times;
for my $file (@ARGV) {
   open(my $in, '<', $file) or die "cannot read $file: $!\n";
   my $text = do { local $/; <$in> };
   close $in;
   my $version = version_for($text);
   if (!eval { $parser->parse_status_text($text, 0, {}, $full, $version); 1 }) {
      (my $error = $@) =~ s/\s+/ /g;
      print "failed $error $file\n";
      next;
   }
   my $best;
   for my $round (1 .. 3) {
      my $start = clock_gettime(CLOCK_PROCESS_CPUTIME_ID);
      $parser->parse_status_text($text, 0, {}, $full, $version) for 1 .. $repeats;
      my $each = (clock_gettime(CLOCK_PROCESS_CPUTIME_ID) - $start) / $repeats;
      $best = $each if !defined $best || $each < $best;
   }
   push @times, $best * 1e6;
   printf "%.1f %s\n", $best * 1e6, $file;
}
my $sum = 0;
$sum += $_ for @times;
printf "mean %.1f over %d\n", (@times ? $sum / @times : 0), scalar @times;
