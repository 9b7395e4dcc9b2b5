// Weka's supervised discretization (Fayyad & Irani's MDL, weka.filters.supervised.attribute.Discretize
// with its defaults) of every numeric attribute of an ARFF file whose last attribute is the class:
//   java -cp /usr/share/java/weka.jar WekaCuts.java DATA.arff
// One line per numeric attribute: "index<TAB>cut,cut,..." (cuts in increasing order, each printed by
// Double.toString: the shortest decimal that reads back as the same double; nothing after the tab
// when the attribute gets no cut).
import java.io.BufferedReader;
import java.io.FileReader;
import weka.core.Instances;
import weka.filters.Filter;
import weka.filters.supervised.attribute.Discretize;

public class WekaCuts {
    public static void main(String[] args) throws Exception {
        Instances data = new Instances(new BufferedReader(new FileReader(args[0])));
        data.setClassIndex(data.numAttributes() - 1);
        Discretize filter = new Discretize();
        filter.setInputFormat(data);
        Filter.useFilter(data, filter);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < data.numAttributes() - 1; i++) {
            if (!data.attribute(i).isNumeric()) {
                continue;
            }
            double[] cuts = filter.getCutPoints(i);
            out.append(i).append('\t');
            if (cuts != null) {
                for (int j = 0; j < cuts.length; j++) {
                    out.append(j == 0 ? "" : ",").append(Double.toString(cuts[j]));
                }
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
