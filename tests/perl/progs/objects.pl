# Blessed objects kept by a package variable: perl destroys them in global destruction,
# after the program is over. "At exit" is what the program left behind: they are live.
package Foo;
sub new { my ($c, $i) = @_; return bless { data => "payload " x 20, id => $i }, $c }   # @new
sub DESTROY { }
package main;
our @OBJS;
push @OBJS, Foo->new($_) for 1 .. ($ARGV[0] // 500);   # @loop
exit 3;
